//! The infrastructure providers `init` knows: each machine-template kind, its apiVersion, the
//! built-in template that renders it, and the field a flavor's instance type goes to.

use super::CapiVersion;
use crate::error::Error;

/// The API group of every infrastructure provider.
pub const GROUP: &str = "infrastructure.cluster.x-k8s.io";

/// Where a flavor lands in a provider's machine template.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlavorField {
    /// The instance type goes to this field of `spec.template.spec`.
    InstanceType(&'static str),
    /// The provider sizes machines from CPU and memory (vSphere: numCPUs, memoryMiB).
    CpuMemory,
    /// The provider has no machine size (Docker, Dev): the flavor exists only in the
    /// MachineDeployment's capacity annotations.
    None,
}

/// One known infrastructure machine-template kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InfraKind {
    /// Short name accepted by `--infrastructure-kind` (case-insensitive), e.g. `openstack`.
    pub short: &'static str,
    /// The machine-template kind, e.g. `OpenStackMachineTemplate`.
    pub kind: &'static str,
    /// Its plural resource name, for RBAC.
    pub plural: &'static str,
    /// API version generated with `--capi-version v1beta2`.
    pub version_v1beta2: &'static str,
    /// API version generated with `--capi-version v1beta1` (older providers).
    pub version_v1beta1: &'static str,
    /// Where the flavor goes.
    pub flavor_field: FlavorField,
    /// Whether the generated template needs `--machine-image` (a required field upstream).
    pub needs_image: bool,
    /// Whether nodes run an external cloud controller manager (kubelet `cloud-provider: external`).
    pub(crate) external_cloud_provider: bool,
    /// The kubelet's node name, when the provider needs it set (`nodeRegistration.name`):
    /// OpenStack names nodes after the instance's hostname as cloud-init renders it, which is
    /// what its cloud-controller-manager matches to set the providerID.
    pub(crate) node_name: Option<&'static str>,
    /// The built-in template file under `templates/infrastructure/`.
    pub(crate) template: &'static str,
}

impl InfraKind {
    /// The apiVersion for the chosen Cluster API version.
    pub fn api_version(&self, capi: CapiVersion) -> String {
        let v = match capi {
            CapiVersion::V1beta2 => self.version_v1beta2,
            CapiVersion::V1beta1 => self.version_v1beta1,
        };
        format!("{GROUP}/{v}")
    }

    /// The instance-type field path (for messages and the template), if any.
    pub(crate) fn instance_type_field(&self) -> Option<&'static str> {
        match self.flavor_field {
            FlavorField::InstanceType(f) => Some(f),
            _ => None,
        }
    }
}

/// Every known kind. OpenStack stays on v1beta1 for both CAPI versions: CAPO's v1beta2 exists only
/// in pre-releases (contract.md). Docker and Dev follow the core API version, as CAPD serves both.
pub const KINDS: &[InfraKind] = &[
    InfraKind {
        short: "openstack",
        kind: "OpenStackMachineTemplate",
        plural: "openstackmachinetemplates",
        version_v1beta2: "v1beta1",
        version_v1beta1: "v1beta1",
        flavor_field: FlavorField::InstanceType("flavor"),
        needs_image: true,
        external_cloud_provider: true,
        node_name: Some("{{ local_hostname }}"),
        template: "infrastructure/openstack.yaml.j2",
    },
    InfraKind {
        short: "docker",
        kind: "DockerMachineTemplate",
        plural: "dockermachinetemplates",
        version_v1beta2: "v1beta2",
        version_v1beta1: "v1beta1",
        flavor_field: FlavorField::None,
        needs_image: false,
        external_cloud_provider: false,
        node_name: None,
        template: "infrastructure/docker.yaml.j2",
    },
    InfraKind {
        short: "dev",
        kind: "DevMachineTemplate",
        plural: "devmachinetemplates",
        version_v1beta2: "v1beta2",
        version_v1beta1: "v1beta1",
        flavor_field: FlavorField::None,
        needs_image: false,
        external_cloud_provider: false,
        node_name: None,
        template: "infrastructure/dev.yaml.j2",
    },
    InfraKind {
        short: "aws",
        kind: "AWSMachineTemplate",
        plural: "awsmachinetemplates",
        version_v1beta2: "v1beta2",
        version_v1beta1: "v1beta2",
        flavor_field: FlavorField::InstanceType("instanceType"),
        needs_image: false,
        external_cloud_provider: true,
        node_name: None,
        template: "infrastructure/aws.yaml.j2",
    },
    InfraKind {
        short: "azure",
        kind: "AzureMachineTemplate",
        plural: "azuremachinetemplates",
        version_v1beta2: "v1beta1",
        version_v1beta1: "v1beta1",
        flavor_field: FlavorField::InstanceType("vmSize"),
        needs_image: false,
        external_cloud_provider: true,
        node_name: None,
        template: "infrastructure/azure.yaml.j2",
    },
    InfraKind {
        short: "gcp",
        kind: "GCPMachineTemplate",
        plural: "gcpmachinetemplates",
        version_v1beta2: "v1beta1",
        version_v1beta1: "v1beta1",
        flavor_field: FlavorField::InstanceType("instanceType"),
        needs_image: false,
        external_cloud_provider: true,
        node_name: None,
        template: "infrastructure/gcp.yaml.j2",
    },
    InfraKind {
        short: "hetzner",
        kind: "HCloudMachineTemplate",
        plural: "hcloudmachinetemplates",
        version_v1beta2: "v1beta1",
        version_v1beta1: "v1beta1",
        flavor_field: FlavorField::InstanceType("type"),
        needs_image: true,
        external_cloud_provider: true,
        node_name: None,
        template: "infrastructure/hetzner.yaml.j2",
    },
    InfraKind {
        short: "vsphere",
        kind: "VSphereMachineTemplate",
        plural: "vspheremachinetemplates",
        version_v1beta2: "v1beta1",
        version_v1beta1: "v1beta1",
        flavor_field: FlavorField::CpuMemory,
        needs_image: true,
        external_cloud_provider: true,
        node_name: None,
        template: "infrastructure/vsphere.yaml.j2",
    },
];

/// The provider of a template cloned with `--from-cluster` whose kind has no entry above: the
/// clone keeps the worker template's own kind and apiVersion, and its flavor field is found in
/// its spec ([`super::clone::flavor_field`]); nothing else of the provider is assumed.
pub const CLONED: InfraKind = InfraKind {
    short: "cloned",
    kind: "",
    plural: "",
    version_v1beta2: "v1beta2",
    version_v1beta1: "v1beta1",
    flavor_field: FlavorField::None,
    needs_image: false,
    external_cloud_provider: false,
    node_name: None,
    template: "infrastructure/clone.yaml.j2",
};

/// Finds a kind by its short name or kind name, case-insensitively (`openstack`,
/// `OpenStackMachineTemplate`, `OpenStack`, `hcloud`).
pub fn find(text: &str) -> Result<&'static InfraKind, Error> {
    let t = text.trim().to_ascii_lowercase();
    let t = t.strip_suffix("machinetemplate").unwrap_or(&t);
    let t = if t == "hcloud" { "hetzner" } else { t };
    KINDS
        .iter()
        .find(|k| {
            k.short == t || k.kind.to_ascii_lowercase().strip_suffix("machinetemplate") == Some(t)
        })
        .ok_or_else(|| {
            Error::usage(format!(
                "--infrastructure-kind: unknown infrastructure kind {:?}; known kinds: {}",
                text.trim(),
                known_list()
            ))
        })
}

/// `openstack (OpenStackMachineTemplate), docker (...), ...` for messages and help.
pub fn known_list() -> String {
    KINDS
        .iter()
        .map(|k| format!("{} ({})", k.short, k.kind))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_kinds_by_any_spelling() {
        assert_eq!(find("openstack").unwrap().kind, "OpenStackMachineTemplate");
        assert_eq!(
            find("OpenStackMachineTemplate").unwrap().kind,
            "OpenStackMachineTemplate"
        );
        assert_eq!(find("OpenStack").unwrap().kind, "OpenStackMachineTemplate");
        assert_eq!(
            find("HCloudMachineTemplate").unwrap().kind,
            "HCloudMachineTemplate"
        );
        assert_eq!(find("Hetzner").unwrap().kind, "HCloudMachineTemplate");
        assert_eq!(
            find("vsphere").unwrap().api_version(CapiVersion::V1beta2),
            "infrastructure.cluster.x-k8s.io/v1beta1"
        );
        assert_eq!(
            find("docker").unwrap().api_version(CapiVersion::V1beta1),
            "infrastructure.cluster.x-k8s.io/v1beta1"
        );
    }

    #[test]
    fn unknown_kind_lists_the_known_ones() {
        let err = find("Nutanix").unwrap_err().to_string();
        assert_eq!(
            err,
            "--infrastructure-kind: unknown infrastructure kind \"Nutanix\"; known kinds: openstack (OpenStackMachineTemplate), docker (DockerMachineTemplate), dev (DevMachineTemplate), aws (AWSMachineTemplate), azure (AzureMachineTemplate), gcp (GCPMachineTemplate), hetzner (HCloudMachineTemplate), vsphere (VSphereMachineTemplate)"
        );
    }
}
