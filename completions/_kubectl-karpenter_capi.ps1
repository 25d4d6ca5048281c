
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'kubectl-karpenter_capi' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'kubectl-karpenter_capi'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'kubectl-karpenter_capi' {
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the workload cluster''s kubeconfig (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context of the workload cluster')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace of the Cluster API objects (the cluster''s namespace on the management cluster); for `explain pod`, the pod''s namespace (there --management-namespace scopes Cluster API)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace of the Cluster API objects (the cluster''s namespace on the management cluster); for `explain pod`, the pod''s namespace (there --management-namespace scopes Cluster API)')
            [CompletionResult]::new('--management-kubeconfig', '--management-kubeconfig', [CompletionResultType]::ParameterName, 'Path to the management cluster''s kubeconfig (default: the workload cluster''s, i.e. a self-hosted cluster)')
            [CompletionResult]::new('--management-context', '--management-context', [CompletionResultType]::ParameterName, 'The kubeconfig context of the management cluster')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colors; NO_COLOR in the environment turns them off for `auto`')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity, as kubectl''s -v: 0 warnings, 2 info, 4 debug, 6 and up trace')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity, as kubectl''s -v: 0 warnings, 2 info, 4 debug, 6 and up trace')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'How long to wait for one API request before giving up, as kubectl''s: a duration (1s, 2m, 3h) or 0 for no limit beyond the client''s own (30s to connect)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('init', 'init', [CompletionResultType]::ParameterValue, 'Generate the manifests a Cluster API cluster needs for Karpenter-style autoscaling')
            [CompletionResult]::new('doctor', 'doctor', [CompletionResultType]::ParameterValue, 'Check a setup and every stuck NodeClaim; name the cause and the fix')
            [CompletionResult]::new('explain', 'explain', [CompletionResultType]::ParameterValue, 'Explain why a pod was (or would be) placed where it is, or why a NodeClaim is stuck')
            [CompletionResult]::new('simulate', 'simulate', [CompletionResultType]::ParameterValue, 'Show which flavors each strategy would provision for the pending pods, and the cost')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Show the nodes per NodePool, the claims in flight, why pods are pending and the cost')
            [CompletionResult]::new('run', 'run', [CompletionResultType]::ParameterValue, 'Run the controller loop in the foreground (one-shot with --once)')
            [CompletionResult]::new('uninstall', 'uninstall', [CompletionResultType]::ParameterValue, 'Remove the controller, its NodePools, NodeClaims and CRDs from the workload cluster')
            [CompletionResult]::new('completion', 'completion', [CompletionResultType]::ParameterValue, 'Print a shell completion script')
            [CompletionResult]::new('version', 'version', [CompletionResultType]::ParameterValue, 'Print the version and the git commit it was built from')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'kubectl-karpenter_capi;init' {
            [CompletionResult]::new('--cluster-name', '--cluster-name', [CompletionResultType]::ParameterName, 'Name of the Cluster API Cluster [required; asked on a terminal, or read with --from-cluster]')
            [CompletionResult]::new('--kubernetes-version', '--kubernetes-version', [CompletionResultType]::ParameterName, 'Kubernetes version of the worker nodes, e.g. v1.36.1 [required; asked on a terminal, or read with --from-cluster]')
            [CompletionResult]::new('--capi-version', '--capi-version', [CompletionResultType]::ParameterName, 'Cluster API version of the generated objects [default: v1beta2, or the Cluster''s with --from-cluster]')
            [CompletionResult]::new('--infrastructure-kind', '--infrastructure-kind', [CompletionResultType]::ParameterName, 'Infrastructure provider: openstack, docker, dev, aws, azure, gcp, hetzner, vsphere (or the machine-template kind, e.g. OpenStackMachineTemplate) [required; asked on a terminal, or read with --from-cluster]')
            [CompletionResult]::new('--infrastructure-template', '--infrastructure-template', [CompletionResultType]::ParameterName, 'Clone this existing infrastructure machine template (read with --from-cluster), changing only the flavor')
            [CompletionResult]::new('--machine-image', '--machine-image', [CompletionResultType]::ParameterName, 'OS image of the new machines, for providers whose template needs one (OpenStack image name, Hetzner image, vSphere VM template; optional AMI, Azure or GCP image) [required for openstack, hetzner and vsphere unless a template is cloned]')
            [CompletionResult]::new('--flavor', '--flavor', [CompletionResultType]::ParameterName, 'A flavor: NAME:cpu=4,memory=8Gi,price=0.10[,arch=..,zone=..,gpu=[RESOURCE:]N,max=.., maxPods=..,taints=k=v:Effect;..,disk=..,type=..,capacityType=..]. Repeatable [required: at least one flavor, here or with --flavors; asked on a terminal]')
            [CompletionResult]::new('--flavors', '--flavors', [CompletionResultType]::ParameterName, 'A YAML list of flavors with `name` and the same keys as --flavor')
            [CompletionResult]::new('--node-taint', '--node-taint', [CompletionResultType]::ParameterName, 'An extra taint every node registers with (key=value:Effect). Repeatable')
            [CompletionResult]::new('--controller-namespace', '--controller-namespace', [CompletionResultType]::ParameterName, 'Namespace of the controller on the workload cluster')
            [CompletionResult]::new('--consolidation-policy', '--consolidation-policy', [CompletionResultType]::ParameterName, 'NodePool consolidation policy: WhenEmpty, WhenEmptyOrUnderutilized or Balanced')
            [CompletionResult]::new('--consolidate-after', '--consolidate-after', [CompletionResultType]::ParameterName, 'NodePool consolidateAfter (a duration such as 30s, or Never)')
            [CompletionResult]::new('--expire-after', '--expire-after', [CompletionResultType]::ParameterName, 'NodePool expireAfter (a duration such as 720h, or Never)')
            [CompletionResult]::new('--templates', '--templates', [CompletionResultType]::ParameterName, 'Use the templates in this directory (same relative paths as the built-in ones, e.g. workload/nodepool.yaml.j2) instead of the built-in ones; missing files fall back')
            [CompletionResult]::new('--output-dir', '--output-dir', [CompletionResultType]::ParameterName, 'Write DIR/management/*.yaml and DIR/workload/*.yaml instead of printing. Only the files init generates are written (all or none); other files in DIR are never touched')
            [CompletionResult]::new('--image', '--image', [CompletionResultType]::ParameterName, 'Container image of the controller Deployment [default: this version''s image, ghcr.io/karpenter-capi/kubectl-karpenter-capi:v0.1.0; offered on a terminal]')
            [CompletionResult]::new('--controller-kubeconfig', '--controller-kubeconfig', [CompletionResultType]::ParameterName, 'The management kubeconfig the controller uses (mint one with `init kubeconfig`); stored in a Secret on the workload cluster')
            [CompletionResult]::new('--expected-pods', '--expected-pods', [CompletionResultType]::ParameterName, 'Pods the cluster is expected to hold: sizes the controller Deployment''s memory request and limit (about 10 MiB + 10 KiB per pod + 26 KiB per node, plus 25%; README "Memory sizing")')
            [CompletionResult]::new('--expected-nodes', '--expected-nodes', [CompletionResultType]::ParameterName, 'Nodes the cluster is expected to hold [default: expected pods / 10]')
            [CompletionResult]::new('--token-duration', '--token-duration', [CompletionResultType]::ParameterName, 'With --apply and a separate management cluster: how long the controller''s token is valid (a Go duration, at least 10m); rotate with `init kubeconfig` before it expires')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'With --apply: `none` applies, `server` sends a server-side dry run, `client` (or `--dry-run` alone) prints what would be applied without contacting the clusters')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the workload cluster''s kubeconfig (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context of the workload cluster')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace of the Cluster API objects (the cluster''s namespace on the management cluster); for `explain pod`, the pod''s namespace (there --management-namespace scopes Cluster API)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace of the Cluster API objects (the cluster''s namespace on the management cluster); for `explain pod`, the pod''s namespace (there --management-namespace scopes Cluster API)')
            [CompletionResult]::new('--management-kubeconfig', '--management-kubeconfig', [CompletionResultType]::ParameterName, 'Path to the management cluster''s kubeconfig (default: the workload cluster''s, i.e. a self-hosted cluster)')
            [CompletionResult]::new('--management-context', '--management-context', [CompletionResultType]::ParameterName, 'The kubeconfig context of the management cluster')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colors; NO_COLOR in the environment turns them off for `auto`')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity, as kubectl''s -v: 0 warnings, 2 info, 4 debug, 6 and up trace')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity, as kubectl''s -v: 0 warnings, 2 info, 4 debug, 6 and up trace')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'How long to wait for one API request before giving up, as kubectl''s: a duration (1s, 2m, 3h) or 0 for no limit beyond the client''s own (30s to connect)')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'With --output-dir: write even though DIR holds files init did not write (they are left as they are)')
            [CompletionResult]::new('--prune', '--prune', [CompletionResultType]::ParameterName, 'With --output-dir: remove the files an earlier init wrote that this one no longer generates (e.g. of a removed flavor); without it they are only listed as stale')
            [CompletionResult]::new('--apply', '--apply', [CompletionResultType]::ParameterName, 'Apply both bundles with server-side apply (field manager karpenter-capi): the management bundle to --management-kubeconfig/--management-context, the workload bundle to --kubeconfig/--context')
            [CompletionResult]::new('--from-cluster', '--from-cluster', [CompletionResultType]::ParameterName, 'Read the Cluster, its version, API version and an existing machine template from the management cluster as defaults')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'Never prompt; a missing required input is an error')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'Never prompt; a missing required input is an error')
            [CompletionResult]::new('--self-hosted', '--self-hosted', [CompletionResultType]::ParameterName, 'Cluster API runs in the workload cluster itself (no separate management cluster) [asked on a terminal unless --management-kubeconfig says otherwise]')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('kubeconfig', 'kubeconfig', [CompletionResultType]::ParameterValue, 'Print a kubeconfig for the controller''s management ServiceAccount, with a token the live management cluster issues for --duration (apply the management bundle first)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'kubectl-karpenter_capi;init;kubeconfig' {
            [CompletionResult]::new('--cluster-name', '--cluster-name', [CompletionResultType]::ParameterName, 'Name of the Cluster API Cluster (names the ServiceAccount)')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'The API server URL as the workload cluster reaches it [default: the management kubeconfig''s]')
            [CompletionResult]::new('--duration', '--duration', [CompletionResultType]::ParameterName, 'How long the token is valid (a Go duration, at least 10m). The API server issues it (TokenRequest) and may cap it; re-run before it expires to rotate')
            [CompletionResult]::new('--output-file', '--output-file', [CompletionResultType]::ParameterName, 'Write to FILE (mode 0600, replaced whole) instead of standard output')
            [CompletionResult]::new('--controller-namespace', '--controller-namespace', [CompletionResultType]::ParameterName, 'Namespace of that Secret (the controller''s namespace)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the workload cluster''s kubeconfig (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context of the workload cluster')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace of the Cluster API objects (the cluster''s namespace on the management cluster); for `explain pod`, the pod''s namespace (there --management-namespace scopes Cluster API)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace of the Cluster API objects (the cluster''s namespace on the management cluster); for `explain pod`, the pod''s namespace (there --management-namespace scopes Cluster API)')
            [CompletionResult]::new('--management-kubeconfig', '--management-kubeconfig', [CompletionResultType]::ParameterName, 'Path to the management cluster''s kubeconfig (default: the workload cluster''s, i.e. a self-hosted cluster)')
            [CompletionResult]::new('--management-context', '--management-context', [CompletionResultType]::ParameterName, 'The kubeconfig context of the management cluster')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colors; NO_COLOR in the environment turns them off for `auto`')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity, as kubectl''s -v: 0 warnings, 2 info, 4 debug, 6 and up trace')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity, as kubectl''s -v: 0 warnings, 2 info, 4 debug, 6 and up trace')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'How long to wait for one API request before giving up, as kubectl''s: a duration (1s, 2m, 3h) or 0 for no limit beyond the client''s own (30s to connect)')
            [CompletionResult]::new('--secret', '--secret', [CompletionResultType]::ParameterName, 'Print a Secret for the workload cluster holding the kubeconfig instead of the kubeconfig (annotated karpenter-capi.sh/token-expires with the token''s expiry)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-karpenter_capi;init;help' {
            [CompletionResult]::new('kubeconfig', 'kubeconfig', [CompletionResultType]::ParameterValue, 'Print a kubeconfig for the controller''s management ServiceAccount, with a token the live management cluster issues for --duration (apply the management bundle first)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'kubectl-karpenter_capi;init;help;kubeconfig' {
            break
        }
        'kubectl-karpenter_capi;init;help;help' {
            break
        }
        'kubectl-karpenter_capi;doctor' {
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'Read Kubernetes objects from a file, a directory of .yaml/.yml/.json files, or `-` for stdin, instead of a cluster. Repeatable; `kubectl get ... -o yaml` dumps work as they are')
            [CompletionResult]::new('--filename', '--filename', [CompletionResultType]::ParameterName, 'Read Kubernetes objects from a file, a directory of .yaml/.yml/.json files, or `-` for stdin, instead of a cluster. Repeatable; `kubectl get ... -o yaml` dumps work as they are')
            [CompletionResult]::new('--now', '--now', [CompletionResultType]::ParameterName, 'Evaluate ages and timeouts as of this time (RFC 3339), e.g. when the dump was taken')
            [CompletionResult]::new('--validate', '--validate', [CompletionResultType]::ParameterName, 'Fields the objects'' schemas lack, as kubectl''s --validate: `warn` names each on stderr with its file:line, `strict` also fails (exit 2), `ignore` skips the check (and its parse)')
            [CompletionResult]::new('--launch-timeout', '--launch-timeout', [CompletionResultType]::ParameterName, 'Judge NodeClaims without a providerID as stuck after this long (as `run` does)')
            [CompletionResult]::new('--registration-timeout', '--registration-timeout', [CompletionResultType]::ParameterName, 'Judge NodeClaims not registered as stuck after this long (as `run` does)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the workload cluster''s kubeconfig (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context of the workload cluster')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace of the Cluster API objects (the cluster''s namespace on the management cluster); for `explain pod`, the pod''s namespace (there --management-namespace scopes Cluster API)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace of the Cluster API objects (the cluster''s namespace on the management cluster); for `explain pod`, the pod''s namespace (there --management-namespace scopes Cluster API)')
            [CompletionResult]::new('--management-kubeconfig', '--management-kubeconfig', [CompletionResultType]::ParameterName, 'Path to the management cluster''s kubeconfig (default: the workload cluster''s, i.e. a self-hosted cluster)')
            [CompletionResult]::new('--management-context', '--management-context', [CompletionResultType]::ParameterName, 'The kubeconfig context of the management cluster')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colors; NO_COLOR in the environment turns them off for `auto`')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity, as kubectl''s -v: 0 warnings, 2 info, 4 debug, 6 and up trace')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity, as kubectl''s -v: 0 warnings, 2 info, 4 debug, 6 and up trace')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'How long to wait for one API request before giving up, as kubectl''s: a duration (1s, 2m, 3h) or 0 for no limit beyond the client''s own (30s to connect)')
            [CompletionResult]::new('-R', '-R ', [CompletionResultType]::ParameterName, 'Read the directories given with -f recursively, as kubectl''s -R')
            [CompletionResult]::new('--recursive', '--recursive', [CompletionResultType]::ParameterName, 'Read the directories given with -f recursively, as kubectl''s -R')
            [CompletionResult]::new('-A', '-A ', [CompletionResultType]::ParameterName, 'Every namespace (the default without -n), as kubectl''s -A; not with -n')
            [CompletionResult]::new('--all-namespaces', '--all-namespaces', [CompletionResultType]::ParameterName, 'Every namespace (the default without -n), as kubectl''s -A; not with -n')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-karpenter_capi;explain' {
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'Read Kubernetes objects from a file, a directory of .yaml/.yml/.json files, or `-` for stdin, instead of a cluster. Repeatable; `kubectl get ... -o yaml` dumps work as they are')
            [CompletionResult]::new('--filename', '--filename', [CompletionResultType]::ParameterName, 'Read Kubernetes objects from a file, a directory of .yaml/.yml/.json files, or `-` for stdin, instead of a cluster. Repeatable; `kubectl get ... -o yaml` dumps work as they are')
            [CompletionResult]::new('--now', '--now', [CompletionResultType]::ParameterName, 'Evaluate ages and timeouts as of this time (RFC 3339), e.g. when the dump was taken')
            [CompletionResult]::new('--validate', '--validate', [CompletionResultType]::ParameterName, 'Fields the objects'' schemas lack, as kubectl''s --validate: `warn` names each on stderr with its file:line, `strict` also fails (exit 2), `ignore` skips the check (and its parse)')
            [CompletionResult]::new('--management-namespace', '--management-namespace', [CompletionResultType]::ParameterName, 'Namespace of the Cluster API objects on the management cluster (default: every namespace). Here -n is the pod''s namespace, and never scopes this listing')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the workload cluster''s kubeconfig (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context of the workload cluster')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace of the Cluster API objects (the cluster''s namespace on the management cluster); for `explain pod`, the pod''s namespace (there --management-namespace scopes Cluster API)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace of the Cluster API objects (the cluster''s namespace on the management cluster); for `explain pod`, the pod''s namespace (there --management-namespace scopes Cluster API)')
            [CompletionResult]::new('--management-kubeconfig', '--management-kubeconfig', [CompletionResultType]::ParameterName, 'Path to the management cluster''s kubeconfig (default: the workload cluster''s, i.e. a self-hosted cluster)')
            [CompletionResult]::new('--management-context', '--management-context', [CompletionResultType]::ParameterName, 'The kubeconfig context of the management cluster')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colors; NO_COLOR in the environment turns them off for `auto`')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity, as kubectl''s -v: 0 warnings, 2 info, 4 debug, 6 and up trace')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity, as kubectl''s -v: 0 warnings, 2 info, 4 debug, 6 and up trace')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'How long to wait for one API request before giving up, as kubectl''s: a duration (1s, 2m, 3h) or 0 for no limit beyond the client''s own (30s to connect)')
            [CompletionResult]::new('-R', '-R ', [CompletionResultType]::ParameterName, 'Read the directories given with -f recursively, as kubectl''s -R')
            [CompletionResult]::new('--recursive', '--recursive', [CompletionResultType]::ParameterName, 'Read the directories given with -f recursively, as kubectl''s -R')
            [CompletionResult]::new('-A', '-A ', [CompletionResultType]::ParameterName, 'List the Cluster API objects of every namespace (the default without --management-namespace), as kubectl''s -A; not with --management-namespace')
            [CompletionResult]::new('--all-namespaces', '--all-namespaces', [CompletionResultType]::ParameterName, 'List the Cluster API objects of every namespace (the default without --management-namespace), as kubectl''s -A; not with --management-namespace')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-karpenter_capi;simulate' {
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'Read Kubernetes objects from a file, a directory of .yaml/.yml/.json files, or `-` for stdin, instead of a cluster. Repeatable; `kubectl get ... -o yaml` dumps work as they are')
            [CompletionResult]::new('--filename', '--filename', [CompletionResultType]::ParameterName, 'Read Kubernetes objects from a file, a directory of .yaml/.yml/.json files, or `-` for stdin, instead of a cluster. Repeatable; `kubectl get ... -o yaml` dumps work as they are')
            [CompletionResult]::new('--now', '--now', [CompletionResultType]::ParameterName, 'Evaluate ages and timeouts as of this time (RFC 3339), e.g. when the dump was taken')
            [CompletionResult]::new('--validate', '--validate', [CompletionResultType]::ParameterName, 'Fields the objects'' schemas lack, as kubectl''s --validate: `warn` names each on stderr with its file:line, `strict` also fails (exit 2), `ignore` skips the check (and its parse)')
            [CompletionResult]::new('--strategy', '--strategy', [CompletionResultType]::ParameterName, 'Run only this strategy (default: all three, compared)')
            [CompletionResult]::new('--trace', '--trace', [CompletionResultType]::ParameterName, 'The load trace to replay: a YAML trace file, or a built-in one (seed-first-run, seed-benchmark). Without it, -f''s pending workloads arrive at T+0 and leave at T+10m')
            [CompletionResult]::new('--chart', '--chart', [CompletionResultType]::ParameterName, 'Also draw the replay as an SVG: nodes and cost per hour over time, one line per strategy')
            [CompletionResult]::new('-l', '-l', [CompletionResultType]::ParameterName, 'Only the pending pods whose labels match this selector (kubectl''s syntax: k=v, k!=v, k, !k, k in (a,b), k notin (a,b)); running pods stay where they are')
            [CompletionResult]::new('--selector', '--selector', [CompletionResultType]::ParameterName, 'Only the pending pods whose labels match this selector (kubectl''s syntax: k=v, k!=v, k, !k, k in (a,b), k notin (a,b)); running pods stay where they are')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the workload cluster''s kubeconfig (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context of the workload cluster')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace of the Cluster API objects (the cluster''s namespace on the management cluster); for `explain pod`, the pod''s namespace (there --management-namespace scopes Cluster API)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace of the Cluster API objects (the cluster''s namespace on the management cluster); for `explain pod`, the pod''s namespace (there --management-namespace scopes Cluster API)')
            [CompletionResult]::new('--management-kubeconfig', '--management-kubeconfig', [CompletionResultType]::ParameterName, 'Path to the management cluster''s kubeconfig (default: the workload cluster''s, i.e. a self-hosted cluster)')
            [CompletionResult]::new('--management-context', '--management-context', [CompletionResultType]::ParameterName, 'The kubeconfig context of the management cluster')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colors; NO_COLOR in the environment turns them off for `auto`')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity, as kubectl''s -v: 0 warnings, 2 info, 4 debug, 6 and up trace')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity, as kubectl''s -v: 0 warnings, 2 info, 4 debug, 6 and up trace')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'How long to wait for one API request before giving up, as kubectl''s: a duration (1s, 2m, 3h) or 0 for no limit beyond the client''s own (30s to connect)')
            [CompletionResult]::new('-R', '-R ', [CompletionResultType]::ParameterName, 'Read the directories given with -f recursively, as kubectl''s -R')
            [CompletionResult]::new('--recursive', '--recursive', [CompletionResultType]::ParameterName, 'Read the directories given with -f recursively, as kubectl''s -R')
            [CompletionResult]::new('--consolidate', '--consolidate', [CompletionResultType]::ParameterName, 'Show what consolidation would do to the running nodes instead of provisioning')
            [CompletionResult]::new('--live', '--live', [CompletionResultType]::ParameterName, 'Read the live workload and management clusters instead of files or the built-in scenario')
            [CompletionResult]::new('--timeline', '--timeline', [CompletionResultType]::ParameterName, 'Replay the strategies over time against simulated Cluster API and kubelets: milestones, time to Running, nodes and cost per strategy (default trace: the seed report''s first run)')
            [CompletionResult]::new('--no-headers', '--no-headers', [CompletionResultType]::ParameterName, 'Print the tables without their header lines')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-karpenter_capi;status' {
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'Read Kubernetes objects from a file, a directory of .yaml/.yml/.json files, or `-` for stdin, instead of a cluster. Repeatable; `kubectl get ... -o yaml` dumps work as they are')
            [CompletionResult]::new('--filename', '--filename', [CompletionResultType]::ParameterName, 'Read Kubernetes objects from a file, a directory of .yaml/.yml/.json files, or `-` for stdin, instead of a cluster. Repeatable; `kubectl get ... -o yaml` dumps work as they are')
            [CompletionResult]::new('--now', '--now', [CompletionResultType]::ParameterName, 'Evaluate ages and timeouts as of this time (RFC 3339), e.g. when the dump was taken')
            [CompletionResult]::new('--validate', '--validate', [CompletionResultType]::ParameterName, 'Fields the objects'' schemas lack, as kubectl''s --validate: `warn` names each on stderr with its file:line, `strict` also fails (exit 2), `ignore` skips the check (and its parse)')
            [CompletionResult]::new('--interval', '--interval', [CompletionResultType]::ParameterName, 'How often -w re-reads')
            [CompletionResult]::new('-l', '-l', [CompletionResultType]::ParameterName, 'Only the nodes whose labels match this selector (kubectl''s syntax: k=v, k!=v, k, !k, k in (a,b), k notin (a,b)); NodePool totals count only them, the cost comparison counts every node')
            [CompletionResult]::new('--selector', '--selector', [CompletionResultType]::ParameterName, 'Only the nodes whose labels match this selector (kubectl''s syntax: k=v, k!=v, k, !k, k in (a,b), k notin (a,b)); NodePool totals count only them, the cost comparison counts every node')
            [CompletionResult]::new('--currency', '--currency', [CompletionResultType]::ParameterName, 'The currency of the flavors'' prices, shown with them (e.g. EUR for OVHcloud); prices carry no unit otherwise')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the workload cluster''s kubeconfig (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context of the workload cluster')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace of the Cluster API objects (the cluster''s namespace on the management cluster); for `explain pod`, the pod''s namespace (there --management-namespace scopes Cluster API)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace of the Cluster API objects (the cluster''s namespace on the management cluster); for `explain pod`, the pod''s namespace (there --management-namespace scopes Cluster API)')
            [CompletionResult]::new('--management-kubeconfig', '--management-kubeconfig', [CompletionResultType]::ParameterName, 'Path to the management cluster''s kubeconfig (default: the workload cluster''s, i.e. a self-hosted cluster)')
            [CompletionResult]::new('--management-context', '--management-context', [CompletionResultType]::ParameterName, 'The kubeconfig context of the management cluster')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colors; NO_COLOR in the environment turns them off for `auto`')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity, as kubectl''s -v: 0 warnings, 2 info, 4 debug, 6 and up trace')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity, as kubectl''s -v: 0 warnings, 2 info, 4 debug, 6 and up trace')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'How long to wait for one API request before giving up, as kubectl''s: a duration (1s, 2m, 3h) or 0 for no limit beyond the client''s own (30s to connect)')
            [CompletionResult]::new('-R', '-R ', [CompletionResultType]::ParameterName, 'Read the directories given with -f recursively, as kubectl''s -R')
            [CompletionResult]::new('--recursive', '--recursive', [CompletionResultType]::ParameterName, 'Read the directories given with -f recursively, as kubectl''s -R')
            [CompletionResult]::new('-A', '-A ', [CompletionResultType]::ParameterName, 'Every namespace (the default without -n), as kubectl''s -A; not with -n')
            [CompletionResult]::new('--all-namespaces', '--all-namespaces', [CompletionResultType]::ParameterName, 'Every namespace (the default without -n), as kubectl''s -A; not with -n')
            [CompletionResult]::new('-w', '-w', [CompletionResultType]::ParameterName, 'After the first view, keep re-reading (the live clusters or the -f files) every --interval and print the view again whenever it changed, until Ctrl-C')
            [CompletionResult]::new('--watch', '--watch', [CompletionResultType]::ParameterName, 'After the first view, keep re-reading (the live clusters or the -f files) every --interval and print the view again whenever it changed, until Ctrl-C')
            [CompletionResult]::new('--no-headers', '--no-headers', [CompletionResultType]::ParameterName, 'Print tables (and custom columns) without their header lines')
            [CompletionResult]::new('--no-compare', '--no-compare', [CompletionResultType]::ParameterName, 'Skip what each strategy would pay for the current pods (it plans every pod again, which takes a while on large clusters)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-karpenter_capi;run' {
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'Read Kubernetes objects from a file, a directory of .yaml/.yml/.json files, or `-` for stdin, instead of a cluster. Repeatable; `kubectl get ... -o yaml` dumps work as they are')
            [CompletionResult]::new('--filename', '--filename', [CompletionResultType]::ParameterName, 'Read Kubernetes objects from a file, a directory of .yaml/.yml/.json files, or `-` for stdin, instead of a cluster. Repeatable; `kubectl get ... -o yaml` dumps work as they are')
            [CompletionResult]::new('--now', '--now', [CompletionResultType]::ParameterName, 'Evaluate ages and timeouts as of this time (RFC 3339), e.g. when the dump was taken')
            [CompletionResult]::new('--validate', '--validate', [CompletionResultType]::ParameterName, 'Fields the objects'' schemas lack, as kubectl''s --validate: `warn` names each on stderr with its file:line, `strict` also fails (exit 2), `ignore` skips the check (and its parse)')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, '`client` (or `--dry-run` alone) prints the plan without writing anything; `server` is refused: a pass''s writes depend on each other, so the server could not judge them one by one')
            [CompletionResult]::new('--batch-idle-duration', '--batch-idle-duration', [CompletionResultType]::ParameterName, 'Close a batch of pending pods after this long without a new one')
            [CompletionResult]::new('--batch-max-duration', '--batch-max-duration', [CompletionResultType]::ParameterName, 'Close a batch of pending pods after this long at most')
            [CompletionResult]::new('--launch-timeout', '--launch-timeout', [CompletionResultType]::ParameterName, 'Delete a NodeClaim whose Machine has no providerID after this long')
            [CompletionResult]::new('--registration-timeout', '--registration-timeout', [CompletionResultType]::ParameterName, 'Delete a NodeClaim whose Node has not registered after this long')
            [CompletionResult]::new('--leader-election-namespace', '--leader-election-namespace', [CompletionResultType]::ParameterName, 'Namespace of the leader-election Lease')
            [CompletionResult]::new('--metrics-bind-address', '--metrics-bind-address', [CompletionResultType]::ParameterName, 'Serve Prometheus metrics and /healthz, /readyz here')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Log format')
            [CompletionResult]::new('--cluster-name', '--cluster-name', [CompletionResultType]::ParameterName, 'Only the MachineDeployments and Machines of this Cluster (label cluster.x-k8s.io/cluster-name): two clusters in one namespace never touch each other''s')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the workload cluster''s kubeconfig (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context of the workload cluster')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace of the Cluster API objects (the cluster''s namespace on the management cluster); for `explain pod`, the pod''s namespace (there --management-namespace scopes Cluster API)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace of the Cluster API objects (the cluster''s namespace on the management cluster); for `explain pod`, the pod''s namespace (there --management-namespace scopes Cluster API)')
            [CompletionResult]::new('--management-kubeconfig', '--management-kubeconfig', [CompletionResultType]::ParameterName, 'Path to the management cluster''s kubeconfig (default: the workload cluster''s, i.e. a self-hosted cluster)')
            [CompletionResult]::new('--management-context', '--management-context', [CompletionResultType]::ParameterName, 'The kubeconfig context of the management cluster')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colors; NO_COLOR in the environment turns them off for `auto`')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity, as kubectl''s -v: 0 warnings, 2 info, 4 debug, 6 and up trace')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity, as kubectl''s -v: 0 warnings, 2 info, 4 debug, 6 and up trace')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'How long to wait for one API request before giving up, as kubectl''s: a duration (1s, 2m, 3h) or 0 for no limit beyond the client''s own (30s to connect)')
            [CompletionResult]::new('-R', '-R ', [CompletionResultType]::ParameterName, 'Read the directories given with -f recursively, as kubectl''s -R')
            [CompletionResult]::new('--recursive', '--recursive', [CompletionResultType]::ParameterName, 'Read the directories given with -f recursively, as kubectl''s -R')
            [CompletionResult]::new('--once', '--once', [CompletionResultType]::ParameterName, 'Do one observe -> plan -> act pass, print the plan and exit')
            [CompletionResult]::new('--leader-elect', '--leader-elect', [CompletionResultType]::ParameterName, 'Hold a Lease so only one replica acts at a time (Lease karpenter-capi). With --dry-run the replicas compete for Lease karpenter-capi-dry-run instead, never the live controller''s')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-karpenter_capi;uninstall' {
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'How long to wait for the controller''s pods to stop, and with --delete-nodes for the NodeClaims and Machines to go')
            [CompletionResult]::new('--controller-namespace', '--controller-namespace', [CompletionResultType]::ParameterName, 'Namespace of the controller on the workload cluster')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the workload cluster''s kubeconfig (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context of the workload cluster')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace of the Cluster API objects (the cluster''s namespace on the management cluster); for `explain pod`, the pod''s namespace (there --management-namespace scopes Cluster API)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace of the Cluster API objects (the cluster''s namespace on the management cluster); for `explain pod`, the pod''s namespace (there --management-namespace scopes Cluster API)')
            [CompletionResult]::new('--management-kubeconfig', '--management-kubeconfig', [CompletionResultType]::ParameterName, 'Path to the management cluster''s kubeconfig (default: the workload cluster''s, i.e. a self-hosted cluster)')
            [CompletionResult]::new('--management-context', '--management-context', [CompletionResultType]::ParameterName, 'The kubeconfig context of the management cluster')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colors; NO_COLOR in the environment turns them off for `auto`')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity, as kubectl''s -v: 0 warnings, 2 info, 4 debug, 6 and up trace')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity, as kubectl''s -v: 0 warnings, 2 info, 4 debug, 6 and up trace')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'How long to wait for one API request before giving up, as kubectl''s: a duration (1s, 2m, 3h) or 0 for no limit beyond the client''s own (30s to connect)')
            [CompletionResult]::new('--delete-nodes', '--delete-nodes', [CompletionResultType]::ParameterName, 'Delete every NodeClaim first and wait until its Machine is gone (needs the controller running); without it the nodes and Machines stay')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-karpenter_capi;completion' {
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the workload cluster''s kubeconfig (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context of the workload cluster')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace of the Cluster API objects (the cluster''s namespace on the management cluster); for `explain pod`, the pod''s namespace (there --management-namespace scopes Cluster API)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace of the Cluster API objects (the cluster''s namespace on the management cluster); for `explain pod`, the pod''s namespace (there --management-namespace scopes Cluster API)')
            [CompletionResult]::new('--management-kubeconfig', '--management-kubeconfig', [CompletionResultType]::ParameterName, 'Path to the management cluster''s kubeconfig (default: the workload cluster''s, i.e. a self-hosted cluster)')
            [CompletionResult]::new('--management-context', '--management-context', [CompletionResultType]::ParameterName, 'The kubeconfig context of the management cluster')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colors; NO_COLOR in the environment turns them off for `auto`')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity, as kubectl''s -v: 0 warnings, 2 info, 4 debug, 6 and up trace')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity, as kubectl''s -v: 0 warnings, 2 info, 4 debug, 6 and up trace')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'How long to wait for one API request before giving up, as kubectl''s: a duration (1s, 2m, 3h) or 0 for no limit beyond the client''s own (30s to connect)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-karpenter_capi;version' {
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the workload cluster''s kubeconfig (default: $KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context of the workload cluster')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace of the Cluster API objects (the cluster''s namespace on the management cluster); for `explain pod`, the pod''s namespace (there --management-namespace scopes Cluster API)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace of the Cluster API objects (the cluster''s namespace on the management cluster); for `explain pod`, the pod''s namespace (there --management-namespace scopes Cluster API)')
            [CompletionResult]::new('--management-kubeconfig', '--management-kubeconfig', [CompletionResultType]::ParameterName, 'Path to the management cluster''s kubeconfig (default: the workload cluster''s, i.e. a self-hosted cluster)')
            [CompletionResult]::new('--management-context', '--management-context', [CompletionResultType]::ParameterName, 'The kubeconfig context of the management cluster')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format (`name`, `jsonpath=` and `custom-columns=` for `status` only)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colors; NO_COLOR in the environment turns them off for `auto`')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log verbosity, as kubectl''s -v: 0 warnings, 2 info, 4 debug, 6 and up trace')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'Log verbosity, as kubectl''s -v: 0 warnings, 2 info, 4 debug, 6 and up trace')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'How long to wait for one API request before giving up, as kubectl''s: a duration (1s, 2m, 3h) or 0 for no limit beyond the client''s own (30s to connect)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-karpenter_capi;help' {
            [CompletionResult]::new('init', 'init', [CompletionResultType]::ParameterValue, 'Generate the manifests a Cluster API cluster needs for Karpenter-style autoscaling')
            [CompletionResult]::new('doctor', 'doctor', [CompletionResultType]::ParameterValue, 'Check a setup and every stuck NodeClaim; name the cause and the fix')
            [CompletionResult]::new('explain', 'explain', [CompletionResultType]::ParameterValue, 'Explain why a pod was (or would be) placed where it is, or why a NodeClaim is stuck')
            [CompletionResult]::new('simulate', 'simulate', [CompletionResultType]::ParameterValue, 'Show which flavors each strategy would provision for the pending pods, and the cost')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Show the nodes per NodePool, the claims in flight, why pods are pending and the cost')
            [CompletionResult]::new('run', 'run', [CompletionResultType]::ParameterValue, 'Run the controller loop in the foreground (one-shot with --once)')
            [CompletionResult]::new('uninstall', 'uninstall', [CompletionResultType]::ParameterValue, 'Remove the controller, its NodePools, NodeClaims and CRDs from the workload cluster')
            [CompletionResult]::new('completion', 'completion', [CompletionResultType]::ParameterValue, 'Print a shell completion script')
            [CompletionResult]::new('version', 'version', [CompletionResultType]::ParameterValue, 'Print the version and the git commit it was built from')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'kubectl-karpenter_capi;help;init' {
            [CompletionResult]::new('kubeconfig', 'kubeconfig', [CompletionResultType]::ParameterValue, 'Print a kubeconfig for the controller''s management ServiceAccount, with a token the live management cluster issues for --duration (apply the management bundle first)')
            break
        }
        'kubectl-karpenter_capi;help;init;kubeconfig' {
            break
        }
        'kubectl-karpenter_capi;help;doctor' {
            break
        }
        'kubectl-karpenter_capi;help;explain' {
            break
        }
        'kubectl-karpenter_capi;help;simulate' {
            break
        }
        'kubectl-karpenter_capi;help;status' {
            break
        }
        'kubectl-karpenter_capi;help;run' {
            break
        }
        'kubectl-karpenter_capi;help;uninstall' {
            break
        }
        'kubectl-karpenter_capi;help;completion' {
            break
        }
        'kubectl-karpenter_capi;help;version' {
            break
        }
        'kubectl-karpenter_capi;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
