# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_kubectl_karpenter_capi_global_optspecs
    string join \n kubeconfig= context= n/namespace= management-kubeconfig= management-context= o/output= color= v/v= request-timeout= h/help V/version
end

function __fish_kubectl_karpenter_capi_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_kubectl_karpenter_capi_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_kubectl_karpenter_capi_using_subcommand
    set -l cmd (__fish_kubectl_karpenter_capi_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_needs_command" -l kubeconfig -d 'Path to the workload cluster\'s kubeconfig (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_needs_command" -l context -d 'The kubeconfig context of the workload cluster' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_needs_command" -s n -l namespace -d 'Namespace of the Cluster API objects (the cluster\'s namespace on the management cluster); for `explain pod`, the pod\'s namespace (there --management-namespace scopes Cluster API)' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_needs_command" -l management-kubeconfig -d 'Path to the management cluster\'s kubeconfig (default: the workload cluster\'s, i.e. a self-hosted cluster)' -r -F
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_needs_command" -l management-context -d 'The kubeconfig context of the management cluster' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_needs_command" -s o -l output -d 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)' -r -f -a "table\t'A human-readable table or tree'
wide\t'The table with more columns'
json\t'JSON for scripts'
yaml\t'YAML for scripts'
name\t'kind/name lines (status)'
jsonpath=\t'A JSONPath template over the JSON (status)'
custom-columns=\t'HEADER:PATH,... columns over the nodes (status)'"
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_needs_command" -l color -d 'When to use colors; NO_COLOR in the environment turns them off for `auto`' -r -f -a "auto\t'Colors when writing to a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_needs_command" -s v -l v -d 'Log verbosity, as kubectl\'s -v: 0 warnings, 2 info, 4 debug, 6 and up trace' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_needs_command" -l request-timeout -d 'How long to wait for one API request before giving up, as kubectl\'s: a duration (1s, 2m, 3h) or 0 for no limit beyond the client\'s own (30s to connect)' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_needs_command" -s V -l version -d 'Print version'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_needs_command" -f -a "init" -d 'Generate the manifests a Cluster API cluster needs for Karpenter-style autoscaling'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_needs_command" -f -a "doctor" -d 'Check a setup and every stuck NodeClaim; name the cause and the fix'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_needs_command" -f -a "explain" -d 'Explain why a pod was (or would be) placed where it is, or why a NodeClaim is stuck'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_needs_command" -f -a "simulate" -d 'Show which flavors each strategy would provision for the pending pods, and the cost'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_needs_command" -f -a "status" -d 'Show the nodes per NodePool, the claims in flight, why pods are pending and the cost'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_needs_command" -f -a "run" -d 'Run the controller loop in the foreground (one-shot with --once)'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_needs_command" -f -a "uninstall" -d 'Remove the controller, its NodePools, NodeClaims and CRDs from the workload cluster'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_needs_command" -f -a "completion" -d 'Print a shell completion script'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_needs_command" -f -a "version" -d 'Print the version and the git commit it was built from'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and not __fish_seen_subcommand_from kubeconfig help" -l cluster-name -d 'Name of the Cluster API Cluster [required; asked on a terminal, or read with --from-cluster]' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and not __fish_seen_subcommand_from kubeconfig help" -l kubernetes-version -d 'Kubernetes version of the worker nodes, e.g. v1.36.1 [required; asked on a terminal, or read with --from-cluster]' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and not __fish_seen_subcommand_from kubeconfig help" -l capi-version -d 'Cluster API version of the generated objects [default: v1beta2, or the Cluster\'s with --from-cluster]' -r -f -a "v1beta2\t'cluster.x-k8s.io/v1beta2 (storage version since Cluster API 1.11)'
v1beta1\t'cluster.x-k8s.io/v1beta1 (deprecated, still served)'"
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and not __fish_seen_subcommand_from kubeconfig help" -l infrastructure-kind -d 'Infrastructure provider: openstack, docker, dev, aws, azure, gcp, hetzner, vsphere (or the machine-template kind, e.g. OpenStackMachineTemplate) [required; asked on a terminal, or read with --from-cluster]' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and not __fish_seen_subcommand_from kubeconfig help" -l infrastructure-template -d 'Clone this existing infrastructure machine template (read with --from-cluster), changing only the flavor' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and not __fish_seen_subcommand_from kubeconfig help" -l machine-image -d 'OS image of the new machines, for providers whose template needs one (OpenStack image name, Hetzner image, vSphere VM template; optional AMI, Azure or GCP image) [required for openstack, hetzner and vsphere unless a template is cloned]' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and not __fish_seen_subcommand_from kubeconfig help" -l flavor -d 'A flavor: NAME:cpu=4,memory=8Gi,price=0.10[,arch=..,zone=..,gpu=[RESOURCE:]N,max=.., maxPods=..,taints=k=v:Effect;..,disk=..,type=..,capacityType=..]. Repeatable [required: at least one flavor, here or with --flavors; asked on a terminal]' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and not __fish_seen_subcommand_from kubeconfig help" -l flavors -d 'A YAML list of flavors with `name` and the same keys as --flavor' -r -F
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and not __fish_seen_subcommand_from kubeconfig help" -l node-taint -d 'An extra taint every node registers with (key=value:Effect). Repeatable' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and not __fish_seen_subcommand_from kubeconfig help" -l controller-namespace -d 'Namespace of the controller on the workload cluster' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and not __fish_seen_subcommand_from kubeconfig help" -l consolidation-policy -d 'NodePool consolidation policy: WhenEmpty, WhenEmptyOrUnderutilized or Balanced' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and not __fish_seen_subcommand_from kubeconfig help" -l consolidate-after -d 'NodePool consolidateAfter (a duration such as 30s, or Never)' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and not __fish_seen_subcommand_from kubeconfig help" -l expire-after -d 'NodePool expireAfter (a duration such as 720h, or Never)' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and not __fish_seen_subcommand_from kubeconfig help" -l templates -d 'Use the templates in this directory (same relative paths as the built-in ones, e.g. workload/nodepool.yaml.j2) instead of the built-in ones; missing files fall back' -r -F
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and not __fish_seen_subcommand_from kubeconfig help" -l output-dir -d 'Write DIR/management/*.yaml and DIR/workload/*.yaml instead of printing. Only the files init generates are written (all or none); other files in DIR are never touched' -r -F
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and not __fish_seen_subcommand_from kubeconfig help" -l image -d 'Container image of the controller Deployment [default: this version\'s image, ghcr.io/karpenter-capi/kubectl-karpenter-capi:v0.1.0; offered on a terminal]' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and not __fish_seen_subcommand_from kubeconfig help" -l controller-kubeconfig -d 'The management kubeconfig the controller uses (mint one with `init kubeconfig`); stored in a Secret on the workload cluster' -r -F
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and not __fish_seen_subcommand_from kubeconfig help" -l expected-pods -d 'Pods the cluster is expected to hold: sizes the controller Deployment\'s memory request and limit (about 10 MiB + 10 KiB per pod + 26 KiB per node, plus 25%; README "Memory sizing")' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and not __fish_seen_subcommand_from kubeconfig help" -l expected-nodes -d 'Nodes the cluster is expected to hold [default: expected pods / 10]' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and not __fish_seen_subcommand_from kubeconfig help" -l token-duration -d 'With --apply and a separate management cluster: how long the controller\'s token is valid (a Go duration, at least 10m); rotate with `init kubeconfig` before it expires' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and not __fish_seen_subcommand_from kubeconfig help" -l dry-run -d 'With --apply: `none` applies, `server` sends a server-side dry run, `client` (or `--dry-run` alone) prints what would be applied without contacting the clusters' -r -f -a "none\t'Write for real'
client\t'Only print what would be written; nothing is sent'
server\t'Ask the API server to validate without persisting'"
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and not __fish_seen_subcommand_from kubeconfig help" -l kubeconfig -d 'Path to the workload cluster\'s kubeconfig (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and not __fish_seen_subcommand_from kubeconfig help" -l context -d 'The kubeconfig context of the workload cluster' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and not __fish_seen_subcommand_from kubeconfig help" -s n -l namespace -d 'Namespace of the Cluster API objects (the cluster\'s namespace on the management cluster); for `explain pod`, the pod\'s namespace (there --management-namespace scopes Cluster API)' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and not __fish_seen_subcommand_from kubeconfig help" -l management-kubeconfig -d 'Path to the management cluster\'s kubeconfig (default: the workload cluster\'s, i.e. a self-hosted cluster)' -r -F
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and not __fish_seen_subcommand_from kubeconfig help" -l management-context -d 'The kubeconfig context of the management cluster' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and not __fish_seen_subcommand_from kubeconfig help" -s o -l output -d 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)' -r -f -a "table\t'A human-readable table or tree'
wide\t'The table with more columns'
json\t'JSON for scripts'
yaml\t'YAML for scripts'
name\t'kind/name lines (status)'
jsonpath=\t'A JSONPath template over the JSON (status)'
custom-columns=\t'HEADER:PATH,... columns over the nodes (status)'"
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and not __fish_seen_subcommand_from kubeconfig help" -l color -d 'When to use colors; NO_COLOR in the environment turns them off for `auto`' -r -f -a "auto\t'Colors when writing to a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and not __fish_seen_subcommand_from kubeconfig help" -s v -l v -d 'Log verbosity, as kubectl\'s -v: 0 warnings, 2 info, 4 debug, 6 and up trace' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and not __fish_seen_subcommand_from kubeconfig help" -l request-timeout -d 'How long to wait for one API request before giving up, as kubectl\'s: a duration (1s, 2m, 3h) or 0 for no limit beyond the client\'s own (30s to connect)' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and not __fish_seen_subcommand_from kubeconfig help" -l force -d 'With --output-dir: write even though DIR holds files init did not write (they are left as they are)'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and not __fish_seen_subcommand_from kubeconfig help" -l prune -d 'With --output-dir: remove the files an earlier init wrote that this one no longer generates (e.g. of a removed flavor); without it they are only listed as stale'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and not __fish_seen_subcommand_from kubeconfig help" -l apply -d 'Apply both bundles with server-side apply (field manager karpenter-capi): the management bundle to --management-kubeconfig/--management-context, the workload bundle to --kubeconfig/--context'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and not __fish_seen_subcommand_from kubeconfig help" -l from-cluster -d 'Read the Cluster, its version, API version and an existing machine template from the management cluster as defaults'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and not __fish_seen_subcommand_from kubeconfig help" -s y -l yes -d 'Never prompt; a missing required input is an error'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and not __fish_seen_subcommand_from kubeconfig help" -l self-hosted -d 'Cluster API runs in the workload cluster itself (no separate management cluster) [asked on a terminal unless --management-kubeconfig says otherwise]'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and not __fish_seen_subcommand_from kubeconfig help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and not __fish_seen_subcommand_from kubeconfig help" -s V -l version -d 'Print version'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and not __fish_seen_subcommand_from kubeconfig help" -f -a "kubeconfig" -d 'Print a kubeconfig for the controller\'s management ServiceAccount, with a token the live management cluster issues for --duration (apply the management bundle first)'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and not __fish_seen_subcommand_from kubeconfig help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and __fish_seen_subcommand_from kubeconfig" -l cluster-name -d 'Name of the Cluster API Cluster (names the ServiceAccount)' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and __fish_seen_subcommand_from kubeconfig" -l server -d 'The API server URL as the workload cluster reaches it [default: the management kubeconfig\'s]' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and __fish_seen_subcommand_from kubeconfig" -l duration -d 'How long the token is valid (a Go duration, at least 10m). The API server issues it (TokenRequest) and may cap it; re-run before it expires to rotate' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and __fish_seen_subcommand_from kubeconfig" -l output-file -d 'Write to FILE (mode 0600, replaced whole) instead of standard output' -r -F
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and __fish_seen_subcommand_from kubeconfig" -l controller-namespace -d 'Namespace of that Secret (the controller\'s namespace)' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and __fish_seen_subcommand_from kubeconfig" -l kubeconfig -d 'Path to the workload cluster\'s kubeconfig (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and __fish_seen_subcommand_from kubeconfig" -l context -d 'The kubeconfig context of the workload cluster' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and __fish_seen_subcommand_from kubeconfig" -s n -l namespace -d 'Namespace of the Cluster API objects (the cluster\'s namespace on the management cluster); for `explain pod`, the pod\'s namespace (there --management-namespace scopes Cluster API)' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and __fish_seen_subcommand_from kubeconfig" -l management-kubeconfig -d 'Path to the management cluster\'s kubeconfig (default: the workload cluster\'s, i.e. a self-hosted cluster)' -r -F
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and __fish_seen_subcommand_from kubeconfig" -l management-context -d 'The kubeconfig context of the management cluster' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and __fish_seen_subcommand_from kubeconfig" -s o -l output -d 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)' -r -f -a "table\t'A human-readable table or tree'
wide\t'The table with more columns'
json\t'JSON for scripts'
yaml\t'YAML for scripts'
name\t'kind/name lines (status)'
jsonpath=\t'A JSONPath template over the JSON (status)'
custom-columns=\t'HEADER:PATH,... columns over the nodes (status)'"
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and __fish_seen_subcommand_from kubeconfig" -l color -d 'When to use colors; NO_COLOR in the environment turns them off for `auto`' -r -f -a "auto\t'Colors when writing to a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and __fish_seen_subcommand_from kubeconfig" -s v -l v -d 'Log verbosity, as kubectl\'s -v: 0 warnings, 2 info, 4 debug, 6 and up trace' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and __fish_seen_subcommand_from kubeconfig" -l request-timeout -d 'How long to wait for one API request before giving up, as kubectl\'s: a duration (1s, 2m, 3h) or 0 for no limit beyond the client\'s own (30s to connect)' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and __fish_seen_subcommand_from kubeconfig" -l secret -d 'Print a Secret for the workload cluster holding the kubeconfig instead of the kubeconfig (annotated karpenter-capi.sh/token-expires with the token\'s expiry)'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and __fish_seen_subcommand_from kubeconfig" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and __fish_seen_subcommand_from kubeconfig" -s V -l version -d 'Print version'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and __fish_seen_subcommand_from help" -f -a "kubeconfig" -d 'Print a kubeconfig for the controller\'s management ServiceAccount, with a token the live management cluster issues for --duration (apply the management bundle first)'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand init; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand doctor" -s f -l filename -d 'Read Kubernetes objects from a file, a directory of .yaml/.yml/.json files, or `-` for stdin, instead of a cluster. Repeatable; `kubectl get ... -o yaml` dumps work as they are' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand doctor" -l now -d 'Evaluate ages and timeouts as of this time (RFC 3339), e.g. when the dump was taken' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand doctor" -l validate -d 'Fields the objects\' schemas lack, as kubectl\'s --validate: `warn` names each on stderr with its file:line, `strict` also fails (exit 2), `ignore` skips the check (and its parse)' -r -f -a "warn\t'Warn on stderr and go on'
strict\t'Warn, then fail with exit 2'
ignore\t'Do not check'"
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand doctor" -l launch-timeout -d 'Judge NodeClaims without a providerID as stuck after this long (as `run` does)' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand doctor" -l registration-timeout -d 'Judge NodeClaims not registered as stuck after this long (as `run` does)' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand doctor" -l kubeconfig -d 'Path to the workload cluster\'s kubeconfig (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand doctor" -l context -d 'The kubeconfig context of the workload cluster' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand doctor" -s n -l namespace -d 'Namespace of the Cluster API objects (the cluster\'s namespace on the management cluster); for `explain pod`, the pod\'s namespace (there --management-namespace scopes Cluster API)' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand doctor" -l management-kubeconfig -d 'Path to the management cluster\'s kubeconfig (default: the workload cluster\'s, i.e. a self-hosted cluster)' -r -F
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand doctor" -l management-context -d 'The kubeconfig context of the management cluster' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand doctor" -s o -l output -d 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)' -r -f -a "table\t'A human-readable table or tree'
wide\t'The table with more columns'
json\t'JSON for scripts'
yaml\t'YAML for scripts'
name\t'kind/name lines (status)'
jsonpath=\t'A JSONPath template over the JSON (status)'
custom-columns=\t'HEADER:PATH,... columns over the nodes (status)'"
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand doctor" -l color -d 'When to use colors; NO_COLOR in the environment turns them off for `auto`' -r -f -a "auto\t'Colors when writing to a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand doctor" -s v -l v -d 'Log verbosity, as kubectl\'s -v: 0 warnings, 2 info, 4 debug, 6 and up trace' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand doctor" -l request-timeout -d 'How long to wait for one API request before giving up, as kubectl\'s: a duration (1s, 2m, 3h) or 0 for no limit beyond the client\'s own (30s to connect)' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand doctor" -s R -l recursive -d 'Read the directories given with -f recursively, as kubectl\'s -R'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand doctor" -s A -l all-namespaces -d 'Every namespace (the default without -n), as kubectl\'s -A; not with -n'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand doctor" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand doctor" -s V -l version -d 'Print version'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand explain" -s f -l filename -d 'Read Kubernetes objects from a file, a directory of .yaml/.yml/.json files, or `-` for stdin, instead of a cluster. Repeatable; `kubectl get ... -o yaml` dumps work as they are' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand explain" -l now -d 'Evaluate ages and timeouts as of this time (RFC 3339), e.g. when the dump was taken' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand explain" -l validate -d 'Fields the objects\' schemas lack, as kubectl\'s --validate: `warn` names each on stderr with its file:line, `strict` also fails (exit 2), `ignore` skips the check (and its parse)' -r -f -a "warn\t'Warn on stderr and go on'
strict\t'Warn, then fail with exit 2'
ignore\t'Do not check'"
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand explain" -l management-namespace -d 'Namespace of the Cluster API objects on the management cluster (default: every namespace). Here -n is the pod\'s namespace, and never scopes this listing' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand explain" -l kubeconfig -d 'Path to the workload cluster\'s kubeconfig (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand explain" -l context -d 'The kubeconfig context of the workload cluster' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand explain" -s n -l namespace -d 'Namespace of the Cluster API objects (the cluster\'s namespace on the management cluster); for `explain pod`, the pod\'s namespace (there --management-namespace scopes Cluster API)' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand explain" -l management-kubeconfig -d 'Path to the management cluster\'s kubeconfig (default: the workload cluster\'s, i.e. a self-hosted cluster)' -r -F
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand explain" -l management-context -d 'The kubeconfig context of the management cluster' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand explain" -s o -l output -d 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)' -r -f -a "table\t'A human-readable table or tree'
wide\t'The table with more columns'
json\t'JSON for scripts'
yaml\t'YAML for scripts'
name\t'kind/name lines (status)'
jsonpath=\t'A JSONPath template over the JSON (status)'
custom-columns=\t'HEADER:PATH,... columns over the nodes (status)'"
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand explain" -l color -d 'When to use colors; NO_COLOR in the environment turns them off for `auto`' -r -f -a "auto\t'Colors when writing to a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand explain" -s v -l v -d 'Log verbosity, as kubectl\'s -v: 0 warnings, 2 info, 4 debug, 6 and up trace' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand explain" -l request-timeout -d 'How long to wait for one API request before giving up, as kubectl\'s: a duration (1s, 2m, 3h) or 0 for no limit beyond the client\'s own (30s to connect)' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand explain" -s R -l recursive -d 'Read the directories given with -f recursively, as kubectl\'s -R'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand explain" -s A -l all-namespaces -d 'List the Cluster API objects of every namespace (the default without --management-namespace), as kubectl\'s -A; not with --management-namespace'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand explain" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand explain" -s V -l version -d 'Print version'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand simulate" -s f -l filename -d 'Read Kubernetes objects from a file, a directory of .yaml/.yml/.json files, or `-` for stdin, instead of a cluster. Repeatable; `kubectl get ... -o yaml` dumps work as they are' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand simulate" -l now -d 'Evaluate ages and timeouts as of this time (RFC 3339), e.g. when the dump was taken' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand simulate" -l validate -d 'Fields the objects\' schemas lack, as kubectl\'s --validate: `warn` names each on stderr with its file:line, `strict` also fails (exit 2), `ignore` skips the check (and its parse)' -r -f -a "warn\t'Warn on stderr and go on'
strict\t'Warn, then fail with exit 2'
ignore\t'Do not check'"
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand simulate" -l strategy -d 'Run only this strategy (default: all three, compared)' -r -f -a "cost\t'Ours: the cheapest set of nodes per hour for all placeable pods'
karpenter-capi\t'The upstream Karpenter Cluster API provider: price 0 everywhere, first name wins'
least-waste\t'Cluster Autoscaler\'s default least-waste expander'"
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand simulate" -l trace -d 'The load trace to replay: a YAML trace file, or a built-in one (seed-first-run, seed-benchmark). Without it, -f\'s pending workloads arrive at T+0 and leave at T+10m' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand simulate" -l chart -d 'Also draw the replay as an SVG: nodes and cost per hour over time, one line per strategy' -r -F
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand simulate" -s l -l selector -d 'Only the pending pods whose labels match this selector (kubectl\'s syntax: k=v, k!=v, k, !k, k in (a,b), k notin (a,b)); running pods stay where they are' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand simulate" -l kubeconfig -d 'Path to the workload cluster\'s kubeconfig (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand simulate" -l context -d 'The kubeconfig context of the workload cluster' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand simulate" -s n -l namespace -d 'Namespace of the Cluster API objects (the cluster\'s namespace on the management cluster); for `explain pod`, the pod\'s namespace (there --management-namespace scopes Cluster API)' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand simulate" -l management-kubeconfig -d 'Path to the management cluster\'s kubeconfig (default: the workload cluster\'s, i.e. a self-hosted cluster)' -r -F
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand simulate" -l management-context -d 'The kubeconfig context of the management cluster' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand simulate" -s o -l output -d 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)' -r -f -a "table\t'A human-readable table or tree'
wide\t'The table with more columns'
json\t'JSON for scripts'
yaml\t'YAML for scripts'
name\t'kind/name lines (status)'
jsonpath=\t'A JSONPath template over the JSON (status)'
custom-columns=\t'HEADER:PATH,... columns over the nodes (status)'"
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand simulate" -l color -d 'When to use colors; NO_COLOR in the environment turns them off for `auto`' -r -f -a "auto\t'Colors when writing to a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand simulate" -s v -l v -d 'Log verbosity, as kubectl\'s -v: 0 warnings, 2 info, 4 debug, 6 and up trace' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand simulate" -l request-timeout -d 'How long to wait for one API request before giving up, as kubectl\'s: a duration (1s, 2m, 3h) or 0 for no limit beyond the client\'s own (30s to connect)' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand simulate" -s R -l recursive -d 'Read the directories given with -f recursively, as kubectl\'s -R'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand simulate" -l consolidate -d 'Show what consolidation would do to the running nodes instead of provisioning'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand simulate" -l live -d 'Read the live workload and management clusters instead of files or the built-in scenario'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand simulate" -l timeline -d 'Replay the strategies over time against simulated Cluster API and kubelets: milestones, time to Running, nodes and cost per strategy (default trace: the seed report\'s first run)'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand simulate" -l no-headers -d 'Print the tables without their header lines'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand simulate" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand simulate" -s V -l version -d 'Print version'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand status" -s f -l filename -d 'Read Kubernetes objects from a file, a directory of .yaml/.yml/.json files, or `-` for stdin, instead of a cluster. Repeatable; `kubectl get ... -o yaml` dumps work as they are' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand status" -l now -d 'Evaluate ages and timeouts as of this time (RFC 3339), e.g. when the dump was taken' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand status" -l validate -d 'Fields the objects\' schemas lack, as kubectl\'s --validate: `warn` names each on stderr with its file:line, `strict` also fails (exit 2), `ignore` skips the check (and its parse)' -r -f -a "warn\t'Warn on stderr and go on'
strict\t'Warn, then fail with exit 2'
ignore\t'Do not check'"
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand status" -l interval -d 'How often -w re-reads' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand status" -s l -l selector -d 'Only the nodes whose labels match this selector (kubectl\'s syntax: k=v, k!=v, k, !k, k in (a,b), k notin (a,b)); NodePool totals count only them, the cost comparison counts every node' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand status" -l currency -d 'The currency of the flavors\' prices, shown with them (e.g. EUR for OVHcloud); prices carry no unit otherwise' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand status" -l kubeconfig -d 'Path to the workload cluster\'s kubeconfig (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand status" -l context -d 'The kubeconfig context of the workload cluster' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand status" -s n -l namespace -d 'Namespace of the Cluster API objects (the cluster\'s namespace on the management cluster); for `explain pod`, the pod\'s namespace (there --management-namespace scopes Cluster API)' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand status" -l management-kubeconfig -d 'Path to the management cluster\'s kubeconfig (default: the workload cluster\'s, i.e. a self-hosted cluster)' -r -F
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand status" -l management-context -d 'The kubeconfig context of the management cluster' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand status" -s o -l output -d 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)' -r -f -a "table\t'A human-readable table or tree'
wide\t'The table with more columns'
json\t'JSON for scripts'
yaml\t'YAML for scripts'
name\t'kind/name lines (status)'
jsonpath=\t'A JSONPath template over the JSON (status)'
custom-columns=\t'HEADER:PATH,... columns over the nodes (status)'"
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand status" -l color -d 'When to use colors; NO_COLOR in the environment turns them off for `auto`' -r -f -a "auto\t'Colors when writing to a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand status" -s v -l v -d 'Log verbosity, as kubectl\'s -v: 0 warnings, 2 info, 4 debug, 6 and up trace' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand status" -l request-timeout -d 'How long to wait for one API request before giving up, as kubectl\'s: a duration (1s, 2m, 3h) or 0 for no limit beyond the client\'s own (30s to connect)' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand status" -s R -l recursive -d 'Read the directories given with -f recursively, as kubectl\'s -R'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand status" -s A -l all-namespaces -d 'Every namespace (the default without -n), as kubectl\'s -A; not with -n'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand status" -s w -l watch -d 'After the first view, keep re-reading (the live clusters or the -f files) every --interval and print the view again whenever it changed, until Ctrl-C'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand status" -l no-headers -d 'Print tables (and custom columns) without their header lines'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand status" -l no-compare -d 'Skip what each strategy would pay for the current pods (it plans every pod again, which takes a while on large clusters)'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand status" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand status" -s V -l version -d 'Print version'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand run" -s f -l filename -d 'Read Kubernetes objects from a file, a directory of .yaml/.yml/.json files, or `-` for stdin, instead of a cluster. Repeatable; `kubectl get ... -o yaml` dumps work as they are' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand run" -l now -d 'Evaluate ages and timeouts as of this time (RFC 3339), e.g. when the dump was taken' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand run" -l validate -d 'Fields the objects\' schemas lack, as kubectl\'s --validate: `warn` names each on stderr with its file:line, `strict` also fails (exit 2), `ignore` skips the check (and its parse)' -r -f -a "warn\t'Warn on stderr and go on'
strict\t'Warn, then fail with exit 2'
ignore\t'Do not check'"
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand run" -l dry-run -d '`client` (or `--dry-run` alone) prints the plan without writing anything; `server` is refused: a pass\'s writes depend on each other, so the server could not judge them one by one' -r -f -a "none\t'Write for real'
client\t'Only print what would be written; nothing is sent'
server\t'Ask the API server to validate without persisting'"
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand run" -l batch-idle-duration -d 'Close a batch of pending pods after this long without a new one' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand run" -l batch-max-duration -d 'Close a batch of pending pods after this long at most' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand run" -l launch-timeout -d 'Delete a NodeClaim whose Machine has no providerID after this long' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand run" -l registration-timeout -d 'Delete a NodeClaim whose Node has not registered after this long' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand run" -l leader-election-namespace -d 'Namespace of the leader-election Lease' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand run" -l metrics-bind-address -d 'Serve Prometheus metrics and /healthz, /readyz here' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand run" -l log-format -d 'Log format' -r -f -a "text\t'Human-readable lines'
json\t'One JSON object per line'"
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand run" -l cluster-name -d 'Only the MachineDeployments and Machines of this Cluster (label cluster.x-k8s.io/cluster-name): two clusters in one namespace never touch each other\'s' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand run" -l kubeconfig -d 'Path to the workload cluster\'s kubeconfig (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand run" -l context -d 'The kubeconfig context of the workload cluster' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand run" -s n -l namespace -d 'Namespace of the Cluster API objects (the cluster\'s namespace on the management cluster); for `explain pod`, the pod\'s namespace (there --management-namespace scopes Cluster API)' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand run" -l management-kubeconfig -d 'Path to the management cluster\'s kubeconfig (default: the workload cluster\'s, i.e. a self-hosted cluster)' -r -F
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand run" -l management-context -d 'The kubeconfig context of the management cluster' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand run" -s o -l output -d 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)' -r -f -a "table\t'A human-readable table or tree'
wide\t'The table with more columns'
json\t'JSON for scripts'
yaml\t'YAML for scripts'
name\t'kind/name lines (status)'
jsonpath=\t'A JSONPath template over the JSON (status)'
custom-columns=\t'HEADER:PATH,... columns over the nodes (status)'"
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand run" -l color -d 'When to use colors; NO_COLOR in the environment turns them off for `auto`' -r -f -a "auto\t'Colors when writing to a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand run" -s v -l v -d 'Log verbosity, as kubectl\'s -v: 0 warnings, 2 info, 4 debug, 6 and up trace' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand run" -l request-timeout -d 'How long to wait for one API request before giving up, as kubectl\'s: a duration (1s, 2m, 3h) or 0 for no limit beyond the client\'s own (30s to connect)' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand run" -s R -l recursive -d 'Read the directories given with -f recursively, as kubectl\'s -R'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand run" -l once -d 'Do one observe -> plan -> act pass, print the plan and exit'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand run" -l leader-elect -d 'Hold a Lease so only one replica acts at a time (Lease karpenter-capi). With --dry-run the replicas compete for Lease karpenter-capi-dry-run instead, never the live controller\'s'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand run" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand run" -s V -l version -d 'Print version'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand uninstall" -l timeout -d 'How long to wait for the controller\'s pods to stop, and with --delete-nodes for the NodeClaims and Machines to go' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand uninstall" -l controller-namespace -d 'Namespace of the controller on the workload cluster' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand uninstall" -l kubeconfig -d 'Path to the workload cluster\'s kubeconfig (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand uninstall" -l context -d 'The kubeconfig context of the workload cluster' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand uninstall" -s n -l namespace -d 'Namespace of the Cluster API objects (the cluster\'s namespace on the management cluster); for `explain pod`, the pod\'s namespace (there --management-namespace scopes Cluster API)' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand uninstall" -l management-kubeconfig -d 'Path to the management cluster\'s kubeconfig (default: the workload cluster\'s, i.e. a self-hosted cluster)' -r -F
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand uninstall" -l management-context -d 'The kubeconfig context of the management cluster' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand uninstall" -s o -l output -d 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)' -r -f -a "table\t'A human-readable table or tree'
wide\t'The table with more columns'
json\t'JSON for scripts'
yaml\t'YAML for scripts'
name\t'kind/name lines (status)'
jsonpath=\t'A JSONPath template over the JSON (status)'
custom-columns=\t'HEADER:PATH,... columns over the nodes (status)'"
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand uninstall" -l color -d 'When to use colors; NO_COLOR in the environment turns them off for `auto`' -r -f -a "auto\t'Colors when writing to a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand uninstall" -s v -l v -d 'Log verbosity, as kubectl\'s -v: 0 warnings, 2 info, 4 debug, 6 and up trace' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand uninstall" -l request-timeout -d 'How long to wait for one API request before giving up, as kubectl\'s: a duration (1s, 2m, 3h) or 0 for no limit beyond the client\'s own (30s to connect)' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand uninstall" -l delete-nodes -d 'Delete every NodeClaim first and wait until its Machine is gone (needs the controller running); without it the nodes and Machines stay'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand uninstall" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand uninstall" -s V -l version -d 'Print version'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand completion" -l kubeconfig -d 'Path to the workload cluster\'s kubeconfig (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand completion" -l context -d 'The kubeconfig context of the workload cluster' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand completion" -s n -l namespace -d 'Namespace of the Cluster API objects (the cluster\'s namespace on the management cluster); for `explain pod`, the pod\'s namespace (there --management-namespace scopes Cluster API)' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand completion" -l management-kubeconfig -d 'Path to the management cluster\'s kubeconfig (default: the workload cluster\'s, i.e. a self-hosted cluster)' -r -F
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand completion" -l management-context -d 'The kubeconfig context of the management cluster' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand completion" -s o -l output -d 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)' -r -f -a "table\t'A human-readable table or tree'
wide\t'The table with more columns'
json\t'JSON for scripts'
yaml\t'YAML for scripts'
name\t'kind/name lines (status)'
jsonpath=\t'A JSONPath template over the JSON (status)'
custom-columns=\t'HEADER:PATH,... columns over the nodes (status)'"
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand completion" -l color -d 'When to use colors; NO_COLOR in the environment turns them off for `auto`' -r -f -a "auto\t'Colors when writing to a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand completion" -s v -l v -d 'Log verbosity, as kubectl\'s -v: 0 warnings, 2 info, 4 debug, 6 and up trace' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand completion" -l request-timeout -d 'How long to wait for one API request before giving up, as kubectl\'s: a duration (1s, 2m, 3h) or 0 for no limit beyond the client\'s own (30s to connect)' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand completion" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand completion" -s V -l version -d 'Print version'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand version" -l kubeconfig -d 'Path to the workload cluster\'s kubeconfig (default: $KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand version" -l context -d 'The kubeconfig context of the workload cluster' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand version" -s n -l namespace -d 'Namespace of the Cluster API objects (the cluster\'s namespace on the management cluster); for `explain pod`, the pod\'s namespace (there --management-namespace scopes Cluster API)' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand version" -l management-kubeconfig -d 'Path to the management cluster\'s kubeconfig (default: the workload cluster\'s, i.e. a self-hosted cluster)' -r -F
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand version" -l management-context -d 'The kubeconfig context of the management cluster' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand version" -s o -l output -d 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)' -r -f -a "table\t'A human-readable table or tree'
wide\t'The table with more columns'
json\t'JSON for scripts'
yaml\t'YAML for scripts'
name\t'kind/name lines (status)'
jsonpath=\t'A JSONPath template over the JSON (status)'
custom-columns=\t'HEADER:PATH,... columns over the nodes (status)'"
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand version" -l color -d 'When to use colors; NO_COLOR in the environment turns them off for `auto`' -r -f -a "auto\t'Colors when writing to a terminal and NO_COLOR is unset'
always\t'Always'
never\t'Never'"
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand version" -s v -l v -d 'Log verbosity, as kubectl\'s -v: 0 warnings, 2 info, 4 debug, 6 and up trace' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand version" -l request-timeout -d 'How long to wait for one API request before giving up, as kubectl\'s: a duration (1s, 2m, 3h) or 0 for no limit beyond the client\'s own (30s to connect)' -r
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand version" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand version" -s V -l version -d 'Print version'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand help; and not __fish_seen_subcommand_from init doctor explain simulate status run uninstall completion version help" -f -a "init" -d 'Generate the manifests a Cluster API cluster needs for Karpenter-style autoscaling'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand help; and not __fish_seen_subcommand_from init doctor explain simulate status run uninstall completion version help" -f -a "doctor" -d 'Check a setup and every stuck NodeClaim; name the cause and the fix'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand help; and not __fish_seen_subcommand_from init doctor explain simulate status run uninstall completion version help" -f -a "explain" -d 'Explain why a pod was (or would be) placed where it is, or why a NodeClaim is stuck'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand help; and not __fish_seen_subcommand_from init doctor explain simulate status run uninstall completion version help" -f -a "simulate" -d 'Show which flavors each strategy would provision for the pending pods, and the cost'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand help; and not __fish_seen_subcommand_from init doctor explain simulate status run uninstall completion version help" -f -a "status" -d 'Show the nodes per NodePool, the claims in flight, why pods are pending and the cost'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand help; and not __fish_seen_subcommand_from init doctor explain simulate status run uninstall completion version help" -f -a "run" -d 'Run the controller loop in the foreground (one-shot with --once)'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand help; and not __fish_seen_subcommand_from init doctor explain simulate status run uninstall completion version help" -f -a "uninstall" -d 'Remove the controller, its NodePools, NodeClaims and CRDs from the workload cluster'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand help; and not __fish_seen_subcommand_from init doctor explain simulate status run uninstall completion version help" -f -a "completion" -d 'Print a shell completion script'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand help; and not __fish_seen_subcommand_from init doctor explain simulate status run uninstall completion version help" -f -a "version" -d 'Print the version and the git commit it was built from'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand help; and not __fish_seen_subcommand_from init doctor explain simulate status run uninstall completion version help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c kubectl-karpenter_capi -n "__fish_kubectl_karpenter_capi_using_subcommand help; and __fish_seen_subcommand_from init" -f -a "kubeconfig" -d 'Print a kubeconfig for the controller\'s management ServiceAccount, with a token the live management cluster issues for --duration (apply the management bundle first)'
