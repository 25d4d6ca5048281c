
use builtin;
use str;

set edit:completion:arg-completer[kubectl-karpenter_capi] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'kubectl-karpenter_capi'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'kubectl-karpenter_capi'= {
            cand --kubeconfig 'Path to the workload cluster''s kubeconfig (default: $KUBECONFIG, then ~/.kube/config)'
            cand --context 'The kubeconfig context of the workload cluster'
            cand -n 'Namespace of the Cluster API objects (the cluster''s namespace on the management cluster); for `explain pod`, the pod''s namespace (there --management-namespace scopes Cluster API)'
            cand --namespace 'Namespace of the Cluster API objects (the cluster''s namespace on the management cluster); for `explain pod`, the pod''s namespace (there --management-namespace scopes Cluster API)'
            cand --management-kubeconfig 'Path to the management cluster''s kubeconfig (default: the workload cluster''s, i.e. a self-hosted cluster)'
            cand --management-context 'The kubeconfig context of the management cluster'
            cand -o 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)'
            cand --output 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)'
            cand --color 'When to use colors; NO_COLOR in the environment turns them off for `auto`'
            cand -v 'Log verbosity, as kubectl''s -v: 0 warnings, 2 info, 4 debug, 6 and up trace'
            cand --v 'Log verbosity, as kubectl''s -v: 0 warnings, 2 info, 4 debug, 6 and up trace'
            cand --request-timeout 'How long to wait for one API request before giving up, as kubectl''s: a duration (1s, 2m, 3h) or 0 for no limit beyond the client''s own (30s to connect)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand init 'Generate the manifests a Cluster API cluster needs for Karpenter-style autoscaling'
            cand doctor 'Check a setup and every stuck NodeClaim; name the cause and the fix'
            cand explain 'Explain why a pod was (or would be) placed where it is, or why a NodeClaim is stuck'
            cand simulate 'Show which flavors each strategy would provision for the pending pods, and the cost'
            cand status 'Show the nodes per NodePool, the claims in flight, why pods are pending and the cost'
            cand run 'Run the controller loop in the foreground (one-shot with --once)'
            cand uninstall 'Remove the controller, its NodePools, NodeClaims and CRDs from the workload cluster'
            cand completion 'Print a shell completion script'
            cand version 'Print the version and the git commit it was built from'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'kubectl-karpenter_capi;init'= {
            cand --cluster-name 'Name of the Cluster API Cluster [required; asked on a terminal, or read with --from-cluster]'
            cand --kubernetes-version 'Kubernetes version of the worker nodes, e.g. v1.36.1 [required; asked on a terminal, or read with --from-cluster]'
            cand --capi-version 'Cluster API version of the generated objects [default: v1beta2, or the Cluster''s with --from-cluster]'
            cand --infrastructure-kind 'Infrastructure provider: openstack, docker, dev, aws, azure, gcp, hetzner, vsphere (or the machine-template kind, e.g. OpenStackMachineTemplate) [required; asked on a terminal, or read with --from-cluster]'
            cand --infrastructure-template 'Clone this existing infrastructure machine template (read with --from-cluster), changing only the flavor'
            cand --machine-image 'OS image of the new machines, for providers whose template needs one (OpenStack image name, Hetzner image, vSphere VM template; optional AMI, Azure or GCP image) [required for openstack, hetzner and vsphere unless a template is cloned]'
            cand --flavor 'A flavor: NAME:cpu=4,memory=8Gi,price=0.10[,arch=..,zone=..,gpu=[RESOURCE:]N,max=.., maxPods=..,taints=k=v:Effect;..,disk=..,type=..,capacityType=..]. Repeatable [required: at least one flavor, here or with --flavors; asked on a terminal]'
            cand --flavors 'A YAML list of flavors with `name` and the same keys as --flavor'
            cand --node-taint 'An extra taint every node registers with (key=value:Effect). Repeatable'
            cand --controller-namespace 'Namespace of the controller on the workload cluster'
            cand --consolidation-policy 'NodePool consolidation policy: WhenEmpty or WhenEmptyOrUnderutilized'
            cand --consolidate-after 'NodePool consolidateAfter (a duration such as 30s, or Never)'
            cand --expire-after 'NodePool expireAfter (a duration such as 720h, or Never)'
            cand --templates 'Use the templates in this directory (same relative paths as the built-in ones, e.g. workload/nodepool.yaml.j2) instead of the built-in ones; missing files fall back'
            cand --output-dir 'Write DIR/management/*.yaml and DIR/workload/*.yaml instead of printing. Only the files init generates are written (all or none); other files in DIR are never touched'
            cand --image 'Container image of the controller Deployment [default: this version''s image, ghcr.io/karpenter-capi/kubectl-karpenter-capi:v0.1.0; offered on a terminal]'
            cand --controller-kubeconfig 'The management kubeconfig the controller uses (mint one with `init kubeconfig`); stored in a Secret on the workload cluster'
            cand --expected-pods 'Pods the cluster is expected to hold: sizes the controller Deployment''s memory request and limit (about 10 MiB + 10 KiB per pod + 26 KiB per node, plus 25%; README "Memory sizing")'
            cand --expected-nodes 'Nodes the cluster is expected to hold [default: expected pods / 10]'
            cand --token-duration 'With --apply and a separate management cluster: how long the controller''s token is valid (a Go duration, at least 10m); rotate with `init kubeconfig` before it expires'
            cand --dry-run 'With --apply: `none` applies, `server` sends a server-side dry run, `client` (or `--dry-run` alone) prints what would be applied without contacting the clusters'
            cand --kubeconfig 'Path to the workload cluster''s kubeconfig (default: $KUBECONFIG, then ~/.kube/config)'
            cand --context 'The kubeconfig context of the workload cluster'
            cand -n 'Namespace of the Cluster API objects (the cluster''s namespace on the management cluster); for `explain pod`, the pod''s namespace (there --management-namespace scopes Cluster API)'
            cand --namespace 'Namespace of the Cluster API objects (the cluster''s namespace on the management cluster); for `explain pod`, the pod''s namespace (there --management-namespace scopes Cluster API)'
            cand --management-kubeconfig 'Path to the management cluster''s kubeconfig (default: the workload cluster''s, i.e. a self-hosted cluster)'
            cand --management-context 'The kubeconfig context of the management cluster'
            cand -o 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)'
            cand --output 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)'
            cand --color 'When to use colors; NO_COLOR in the environment turns them off for `auto`'
            cand -v 'Log verbosity, as kubectl''s -v: 0 warnings, 2 info, 4 debug, 6 and up trace'
            cand --v 'Log verbosity, as kubectl''s -v: 0 warnings, 2 info, 4 debug, 6 and up trace'
            cand --request-timeout 'How long to wait for one API request before giving up, as kubectl''s: a duration (1s, 2m, 3h) or 0 for no limit beyond the client''s own (30s to connect)'
            cand --force 'With --output-dir: write even though DIR holds files init did not write (they are left as they are)'
            cand --prune 'With --output-dir: remove the files an earlier init wrote that this one no longer generates (e.g. of a removed flavor); without it they are only listed as stale'
            cand --apply 'Apply both bundles with server-side apply (field manager karpenter-capi): the management bundle to --management-kubeconfig/--management-context, the workload bundle to --kubeconfig/--context'
            cand --from-cluster 'Read the Cluster, its version, API version and an existing machine template from the management cluster as defaults'
            cand -y 'Never prompt; a missing required input is an error'
            cand --yes 'Never prompt; a missing required input is an error'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand kubeconfig 'Print a kubeconfig for the controller''s management ServiceAccount, with a token the live management cluster issues for --duration (apply the management bundle first)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'kubectl-karpenter_capi;init;kubeconfig'= {
            cand --cluster-name 'Name of the Cluster API Cluster (names the ServiceAccount)'
            cand --server 'The API server URL as the workload cluster reaches it [default: the management kubeconfig''s]'
            cand --duration 'How long the token is valid (a Go duration, at least 10m). The API server issues it (TokenRequest) and may cap it; re-run before it expires to rotate'
            cand --output-file 'Write to FILE (mode 0600, replaced whole) instead of standard output'
            cand --controller-namespace 'Namespace of that Secret (the controller''s namespace)'
            cand --kubeconfig 'Path to the workload cluster''s kubeconfig (default: $KUBECONFIG, then ~/.kube/config)'
            cand --context 'The kubeconfig context of the workload cluster'
            cand -n 'Namespace of the Cluster API objects (the cluster''s namespace on the management cluster); for `explain pod`, the pod''s namespace (there --management-namespace scopes Cluster API)'
            cand --namespace 'Namespace of the Cluster API objects (the cluster''s namespace on the management cluster); for `explain pod`, the pod''s namespace (there --management-namespace scopes Cluster API)'
            cand --management-kubeconfig 'Path to the management cluster''s kubeconfig (default: the workload cluster''s, i.e. a self-hosted cluster)'
            cand --management-context 'The kubeconfig context of the management cluster'
            cand -o 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)'
            cand --output 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)'
            cand --color 'When to use colors; NO_COLOR in the environment turns them off for `auto`'
            cand -v 'Log verbosity, as kubectl''s -v: 0 warnings, 2 info, 4 debug, 6 and up trace'
            cand --v 'Log verbosity, as kubectl''s -v: 0 warnings, 2 info, 4 debug, 6 and up trace'
            cand --request-timeout 'How long to wait for one API request before giving up, as kubectl''s: a duration (1s, 2m, 3h) or 0 for no limit beyond the client''s own (30s to connect)'
            cand --secret 'Print a Secret for the workload cluster holding the kubeconfig instead of the kubeconfig (annotated karpenter-capi.sh/token-expires with the token''s expiry)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'kubectl-karpenter_capi;init;help'= {
            cand kubeconfig 'Print a kubeconfig for the controller''s management ServiceAccount, with a token the live management cluster issues for --duration (apply the management bundle first)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'kubectl-karpenter_capi;init;help;kubeconfig'= {
        }
        &'kubectl-karpenter_capi;init;help;help'= {
        }
        &'kubectl-karpenter_capi;doctor'= {
            cand -f 'Read Kubernetes objects from a file, a directory of .yaml/.yml/.json files, or `-` for stdin, instead of a cluster. Repeatable; `kubectl get ... -o yaml` dumps work as they are'
            cand --filename 'Read Kubernetes objects from a file, a directory of .yaml/.yml/.json files, or `-` for stdin, instead of a cluster. Repeatable; `kubectl get ... -o yaml` dumps work as they are'
            cand --now 'Evaluate ages and timeouts as of this time (RFC 3339), e.g. when the dump was taken'
            cand --launch-timeout 'Judge NodeClaims without a providerID as stuck after this long (as `run` does)'
            cand --registration-timeout 'Judge NodeClaims not registered as stuck after this long (as `run` does)'
            cand --kubeconfig 'Path to the workload cluster''s kubeconfig (default: $KUBECONFIG, then ~/.kube/config)'
            cand --context 'The kubeconfig context of the workload cluster'
            cand -n 'Namespace of the Cluster API objects (the cluster''s namespace on the management cluster); for `explain pod`, the pod''s namespace (there --management-namespace scopes Cluster API)'
            cand --namespace 'Namespace of the Cluster API objects (the cluster''s namespace on the management cluster); for `explain pod`, the pod''s namespace (there --management-namespace scopes Cluster API)'
            cand --management-kubeconfig 'Path to the management cluster''s kubeconfig (default: the workload cluster''s, i.e. a self-hosted cluster)'
            cand --management-context 'The kubeconfig context of the management cluster'
            cand -o 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)'
            cand --output 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)'
            cand --color 'When to use colors; NO_COLOR in the environment turns them off for `auto`'
            cand -v 'Log verbosity, as kubectl''s -v: 0 warnings, 2 info, 4 debug, 6 and up trace'
            cand --v 'Log verbosity, as kubectl''s -v: 0 warnings, 2 info, 4 debug, 6 and up trace'
            cand --request-timeout 'How long to wait for one API request before giving up, as kubectl''s: a duration (1s, 2m, 3h) or 0 for no limit beyond the client''s own (30s to connect)'
            cand -R 'Read the directories given with -f recursively, as kubectl''s -R'
            cand --recursive 'Read the directories given with -f recursively, as kubectl''s -R'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'kubectl-karpenter_capi;explain'= {
            cand -f 'Read Kubernetes objects from a file, a directory of .yaml/.yml/.json files, or `-` for stdin, instead of a cluster. Repeatable; `kubectl get ... -o yaml` dumps work as they are'
            cand --filename 'Read Kubernetes objects from a file, a directory of .yaml/.yml/.json files, or `-` for stdin, instead of a cluster. Repeatable; `kubectl get ... -o yaml` dumps work as they are'
            cand --now 'Evaluate ages and timeouts as of this time (RFC 3339), e.g. when the dump was taken'
            cand --management-namespace 'Namespace of the Cluster API objects on the management cluster (default: every namespace). Here -n is the pod''s namespace, and never scopes this listing'
            cand --kubeconfig 'Path to the workload cluster''s kubeconfig (default: $KUBECONFIG, then ~/.kube/config)'
            cand --context 'The kubeconfig context of the workload cluster'
            cand -n 'Namespace of the Cluster API objects (the cluster''s namespace on the management cluster); for `explain pod`, the pod''s namespace (there --management-namespace scopes Cluster API)'
            cand --namespace 'Namespace of the Cluster API objects (the cluster''s namespace on the management cluster); for `explain pod`, the pod''s namespace (there --management-namespace scopes Cluster API)'
            cand --management-kubeconfig 'Path to the management cluster''s kubeconfig (default: the workload cluster''s, i.e. a self-hosted cluster)'
            cand --management-context 'The kubeconfig context of the management cluster'
            cand -o 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)'
            cand --output 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)'
            cand --color 'When to use colors; NO_COLOR in the environment turns them off for `auto`'
            cand -v 'Log verbosity, as kubectl''s -v: 0 warnings, 2 info, 4 debug, 6 and up trace'
            cand --v 'Log verbosity, as kubectl''s -v: 0 warnings, 2 info, 4 debug, 6 and up trace'
            cand --request-timeout 'How long to wait for one API request before giving up, as kubectl''s: a duration (1s, 2m, 3h) or 0 for no limit beyond the client''s own (30s to connect)'
            cand -R 'Read the directories given with -f recursively, as kubectl''s -R'
            cand --recursive 'Read the directories given with -f recursively, as kubectl''s -R'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'kubectl-karpenter_capi;simulate'= {
            cand -f 'Read Kubernetes objects from a file, a directory of .yaml/.yml/.json files, or `-` for stdin, instead of a cluster. Repeatable; `kubectl get ... -o yaml` dumps work as they are'
            cand --filename 'Read Kubernetes objects from a file, a directory of .yaml/.yml/.json files, or `-` for stdin, instead of a cluster. Repeatable; `kubectl get ... -o yaml` dumps work as they are'
            cand --now 'Evaluate ages and timeouts as of this time (RFC 3339), e.g. when the dump was taken'
            cand --strategy 'Run only this strategy (default: all three, compared)'
            cand --trace 'The load trace to replay: a YAML trace file, or a built-in one (seed-first-run, seed-benchmark). Without it, -f''s pending workloads arrive at T+0 and leave at T+10m'
            cand --chart 'Also draw the replay as an SVG: nodes and cost per hour over time, one line per strategy'
            cand --kubeconfig 'Path to the workload cluster''s kubeconfig (default: $KUBECONFIG, then ~/.kube/config)'
            cand --context 'The kubeconfig context of the workload cluster'
            cand -n 'Namespace of the Cluster API objects (the cluster''s namespace on the management cluster); for `explain pod`, the pod''s namespace (there --management-namespace scopes Cluster API)'
            cand --namespace 'Namespace of the Cluster API objects (the cluster''s namespace on the management cluster); for `explain pod`, the pod''s namespace (there --management-namespace scopes Cluster API)'
            cand --management-kubeconfig 'Path to the management cluster''s kubeconfig (default: the workload cluster''s, i.e. a self-hosted cluster)'
            cand --management-context 'The kubeconfig context of the management cluster'
            cand -o 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)'
            cand --output 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)'
            cand --color 'When to use colors; NO_COLOR in the environment turns them off for `auto`'
            cand -v 'Log verbosity, as kubectl''s -v: 0 warnings, 2 info, 4 debug, 6 and up trace'
            cand --v 'Log verbosity, as kubectl''s -v: 0 warnings, 2 info, 4 debug, 6 and up trace'
            cand --request-timeout 'How long to wait for one API request before giving up, as kubectl''s: a duration (1s, 2m, 3h) or 0 for no limit beyond the client''s own (30s to connect)'
            cand -R 'Read the directories given with -f recursively, as kubectl''s -R'
            cand --recursive 'Read the directories given with -f recursively, as kubectl''s -R'
            cand --consolidate 'Show what consolidation would do to the running nodes instead of provisioning'
            cand --live 'Read the live workload and management clusters instead of files or the built-in scenario'
            cand --timeline 'Replay the strategies over time against simulated Cluster API and kubelets: milestones, time to Running, nodes and cost per strategy (default trace: the seed report''s first run)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'kubectl-karpenter_capi;status'= {
            cand -f 'Read Kubernetes objects from a file, a directory of .yaml/.yml/.json files, or `-` for stdin, instead of a cluster. Repeatable; `kubectl get ... -o yaml` dumps work as they are'
            cand --filename 'Read Kubernetes objects from a file, a directory of .yaml/.yml/.json files, or `-` for stdin, instead of a cluster. Repeatable; `kubectl get ... -o yaml` dumps work as they are'
            cand --now 'Evaluate ages and timeouts as of this time (RFC 3339), e.g. when the dump was taken'
            cand --interval 'How often -w re-reads'
            cand -l 'Only the nodes whose labels match this selector (kubectl''s syntax: k=v, k!=v, k, !k, k in (a,b), k notin (a,b)); NodePool totals count only them, the cost comparison counts every node'
            cand --selector 'Only the nodes whose labels match this selector (kubectl''s syntax: k=v, k!=v, k, !k, k in (a,b), k notin (a,b)); NodePool totals count only them, the cost comparison counts every node'
            cand --currency 'The currency of the flavors'' prices, shown with them (e.g. EUR for OVHcloud); prices carry no unit otherwise'
            cand --kubeconfig 'Path to the workload cluster''s kubeconfig (default: $KUBECONFIG, then ~/.kube/config)'
            cand --context 'The kubeconfig context of the workload cluster'
            cand -n 'Namespace of the Cluster API objects (the cluster''s namespace on the management cluster); for `explain pod`, the pod''s namespace (there --management-namespace scopes Cluster API)'
            cand --namespace 'Namespace of the Cluster API objects (the cluster''s namespace on the management cluster); for `explain pod`, the pod''s namespace (there --management-namespace scopes Cluster API)'
            cand --management-kubeconfig 'Path to the management cluster''s kubeconfig (default: the workload cluster''s, i.e. a self-hosted cluster)'
            cand --management-context 'The kubeconfig context of the management cluster'
            cand -o 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)'
            cand --output 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)'
            cand --color 'When to use colors; NO_COLOR in the environment turns them off for `auto`'
            cand -v 'Log verbosity, as kubectl''s -v: 0 warnings, 2 info, 4 debug, 6 and up trace'
            cand --v 'Log verbosity, as kubectl''s -v: 0 warnings, 2 info, 4 debug, 6 and up trace'
            cand --request-timeout 'How long to wait for one API request before giving up, as kubectl''s: a duration (1s, 2m, 3h) or 0 for no limit beyond the client''s own (30s to connect)'
            cand -R 'Read the directories given with -f recursively, as kubectl''s -R'
            cand --recursive 'Read the directories given with -f recursively, as kubectl''s -R'
            cand -w 'After the first view, keep re-reading (the live clusters or the -f files) every --interval and print the view again whenever it changed, until Ctrl-C'
            cand --watch 'After the first view, keep re-reading (the live clusters or the -f files) every --interval and print the view again whenever it changed, until Ctrl-C'
            cand --no-headers 'Print tables (and custom columns) without their header lines'
            cand --no-compare 'Skip what each strategy would pay for the current pods (it plans every pod again, which takes a while on large clusters)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'kubectl-karpenter_capi;run'= {
            cand -f 'Read Kubernetes objects from a file, a directory of .yaml/.yml/.json files, or `-` for stdin, instead of a cluster. Repeatable; `kubectl get ... -o yaml` dumps work as they are'
            cand --filename 'Read Kubernetes objects from a file, a directory of .yaml/.yml/.json files, or `-` for stdin, instead of a cluster. Repeatable; `kubectl get ... -o yaml` dumps work as they are'
            cand --now 'Evaluate ages and timeouts as of this time (RFC 3339), e.g. when the dump was taken'
            cand --dry-run '`client` (or `--dry-run` alone) prints the plan without writing anything; `server` is refused: a pass''s writes depend on each other, so the server could not judge them one by one'
            cand --batch-idle-duration 'Close a batch of pending pods after this long without a new one'
            cand --batch-max-duration 'Close a batch of pending pods after this long at most'
            cand --launch-timeout 'Delete a NodeClaim whose Machine has no providerID after this long'
            cand --registration-timeout 'Delete a NodeClaim whose Node has not registered after this long'
            cand --leader-election-namespace 'Namespace of the leader-election Lease'
            cand --metrics-bind-address 'Serve Prometheus metrics and /healthz, /readyz here'
            cand --log-format 'Log format'
            cand --cluster-name 'Only the MachineDeployments and Machines of this Cluster (label cluster.x-k8s.io/cluster-name): two clusters in one namespace never touch each other''s'
            cand --kubeconfig 'Path to the workload cluster''s kubeconfig (default: $KUBECONFIG, then ~/.kube/config)'
            cand --context 'The kubeconfig context of the workload cluster'
            cand -n 'Namespace of the Cluster API objects (the cluster''s namespace on the management cluster); for `explain pod`, the pod''s namespace (there --management-namespace scopes Cluster API)'
            cand --namespace 'Namespace of the Cluster API objects (the cluster''s namespace on the management cluster); for `explain pod`, the pod''s namespace (there --management-namespace scopes Cluster API)'
            cand --management-kubeconfig 'Path to the management cluster''s kubeconfig (default: the workload cluster''s, i.e. a self-hosted cluster)'
            cand --management-context 'The kubeconfig context of the management cluster'
            cand -o 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)'
            cand --output 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)'
            cand --color 'When to use colors; NO_COLOR in the environment turns them off for `auto`'
            cand -v 'Log verbosity, as kubectl''s -v: 0 warnings, 2 info, 4 debug, 6 and up trace'
            cand --v 'Log verbosity, as kubectl''s -v: 0 warnings, 2 info, 4 debug, 6 and up trace'
            cand --request-timeout 'How long to wait for one API request before giving up, as kubectl''s: a duration (1s, 2m, 3h) or 0 for no limit beyond the client''s own (30s to connect)'
            cand -R 'Read the directories given with -f recursively, as kubectl''s -R'
            cand --recursive 'Read the directories given with -f recursively, as kubectl''s -R'
            cand --once 'Do one observe -> plan -> act pass, print the plan and exit'
            cand --leader-elect 'Hold a Lease so only one replica acts at a time (Lease karpenter-capi). With --dry-run the replicas compete for Lease karpenter-capi-dry-run instead, never the live controller''s'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'kubectl-karpenter_capi;uninstall'= {
            cand --timeout 'How long to wait for the controller''s pods to stop, and with --delete-nodes for the NodeClaims and Machines to go'
            cand --controller-namespace 'Namespace of the controller on the workload cluster'
            cand --kubeconfig 'Path to the workload cluster''s kubeconfig (default: $KUBECONFIG, then ~/.kube/config)'
            cand --context 'The kubeconfig context of the workload cluster'
            cand -n 'Namespace of the Cluster API objects (the cluster''s namespace on the management cluster); for `explain pod`, the pod''s namespace (there --management-namespace scopes Cluster API)'
            cand --namespace 'Namespace of the Cluster API objects (the cluster''s namespace on the management cluster); for `explain pod`, the pod''s namespace (there --management-namespace scopes Cluster API)'
            cand --management-kubeconfig 'Path to the management cluster''s kubeconfig (default: the workload cluster''s, i.e. a self-hosted cluster)'
            cand --management-context 'The kubeconfig context of the management cluster'
            cand -o 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)'
            cand --output 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)'
            cand --color 'When to use colors; NO_COLOR in the environment turns them off for `auto`'
            cand -v 'Log verbosity, as kubectl''s -v: 0 warnings, 2 info, 4 debug, 6 and up trace'
            cand --v 'Log verbosity, as kubectl''s -v: 0 warnings, 2 info, 4 debug, 6 and up trace'
            cand --request-timeout 'How long to wait for one API request before giving up, as kubectl''s: a duration (1s, 2m, 3h) or 0 for no limit beyond the client''s own (30s to connect)'
            cand --delete-nodes 'Delete every NodeClaim first and wait until its Machine is gone (needs the controller running); without it the nodes and Machines stay'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'kubectl-karpenter_capi;completion'= {
            cand --kubeconfig 'Path to the workload cluster''s kubeconfig (default: $KUBECONFIG, then ~/.kube/config)'
            cand --context 'The kubeconfig context of the workload cluster'
            cand -n 'Namespace of the Cluster API objects (the cluster''s namespace on the management cluster); for `explain pod`, the pod''s namespace (there --management-namespace scopes Cluster API)'
            cand --namespace 'Namespace of the Cluster API objects (the cluster''s namespace on the management cluster); for `explain pod`, the pod''s namespace (there --management-namespace scopes Cluster API)'
            cand --management-kubeconfig 'Path to the management cluster''s kubeconfig (default: the workload cluster''s, i.e. a self-hosted cluster)'
            cand --management-context 'The kubeconfig context of the management cluster'
            cand -o 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)'
            cand --output 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)'
            cand --color 'When to use colors; NO_COLOR in the environment turns them off for `auto`'
            cand -v 'Log verbosity, as kubectl''s -v: 0 warnings, 2 info, 4 debug, 6 and up trace'
            cand --v 'Log verbosity, as kubectl''s -v: 0 warnings, 2 info, 4 debug, 6 and up trace'
            cand --request-timeout 'How long to wait for one API request before giving up, as kubectl''s: a duration (1s, 2m, 3h) or 0 for no limit beyond the client''s own (30s to connect)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'kubectl-karpenter_capi;version'= {
            cand --kubeconfig 'Path to the workload cluster''s kubeconfig (default: $KUBECONFIG, then ~/.kube/config)'
            cand --context 'The kubeconfig context of the workload cluster'
            cand -n 'Namespace of the Cluster API objects (the cluster''s namespace on the management cluster); for `explain pod`, the pod''s namespace (there --management-namespace scopes Cluster API)'
            cand --namespace 'Namespace of the Cluster API objects (the cluster''s namespace on the management cluster); for `explain pod`, the pod''s namespace (there --management-namespace scopes Cluster API)'
            cand --management-kubeconfig 'Path to the management cluster''s kubeconfig (default: the workload cluster''s, i.e. a self-hosted cluster)'
            cand --management-context 'The kubeconfig context of the management cluster'
            cand -o 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)'
            cand --output 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)'
            cand --color 'When to use colors; NO_COLOR in the environment turns them off for `auto`'
            cand -v 'Log verbosity, as kubectl''s -v: 0 warnings, 2 info, 4 debug, 6 and up trace'
            cand --v 'Log verbosity, as kubectl''s -v: 0 warnings, 2 info, 4 debug, 6 and up trace'
            cand --request-timeout 'How long to wait for one API request before giving up, as kubectl''s: a duration (1s, 2m, 3h) or 0 for no limit beyond the client''s own (30s to connect)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'kubectl-karpenter_capi;help'= {
            cand init 'Generate the manifests a Cluster API cluster needs for Karpenter-style autoscaling'
            cand doctor 'Check a setup and every stuck NodeClaim; name the cause and the fix'
            cand explain 'Explain why a pod was (or would be) placed where it is, or why a NodeClaim is stuck'
            cand simulate 'Show which flavors each strategy would provision for the pending pods, and the cost'
            cand status 'Show the nodes per NodePool, the claims in flight, why pods are pending and the cost'
            cand run 'Run the controller loop in the foreground (one-shot with --once)'
            cand uninstall 'Remove the controller, its NodePools, NodeClaims and CRDs from the workload cluster'
            cand completion 'Print a shell completion script'
            cand version 'Print the version and the git commit it was built from'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'kubectl-karpenter_capi;help;init'= {
            cand kubeconfig 'Print a kubeconfig for the controller''s management ServiceAccount, with a token the live management cluster issues for --duration (apply the management bundle first)'
        }
        &'kubectl-karpenter_capi;help;init;kubeconfig'= {
        }
        &'kubectl-karpenter_capi;help;doctor'= {
        }
        &'kubectl-karpenter_capi;help;explain'= {
        }
        &'kubectl-karpenter_capi;help;simulate'= {
        }
        &'kubectl-karpenter_capi;help;status'= {
        }
        &'kubectl-karpenter_capi;help;run'= {
        }
        &'kubectl-karpenter_capi;help;uninstall'= {
        }
        &'kubectl-karpenter_capi;help;completion'= {
        }
        &'kubectl-karpenter_capi;help;version'= {
        }
        &'kubectl-karpenter_capi;help;help'= {
        }
    ]
    $completions[$command]
}
