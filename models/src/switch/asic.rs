//! Switch ASIC buffer profiles: named, overridable data.
//!
//! Sizes are the vendors' published figures; cell sizes and SAI alpha exponents follow the
//! public SDK/SONiC buffer templates where those state them, and are our estimate where they do
//! not (marked so). SAI encodes a dynamic threshold alpha as 2^k (`dynamic_th`: k = -3 is 1/8,
//! 0 is 1, 3 is 8): SAI `SAI_BUFFER_PROFILE_ATTR_SHARED_DYNAMIC_TH`.

use serde::Deserialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Asic {
    /// Broadcom Trident 3 (Edgecore AS7726-32X, AS7326-56X): 32 MB shared.
    #[default]
    Trident3,
    /// NVIDIA Spectrum-2 (SN3700C): 42 MB fully shared.
    Spectrum2,
    /// NVIDIA Spectrum (SN2700): 16 MB.
    Spectrum,
    /// Broadcom Tomahawk: 16 MB as four 4 MB slices (one per pipeline).
    Tomahawk,
    /// A campus-class ASIC (e.g. the Marvell Prestera in a MikroTik CRS504): a few MB and
    /// little headroom.
    Campus,
}

/// The buffer architecture of one ASIC.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Profile {
    /// Total packet buffer, bytes.
    pub buffer: u64,
    /// Allocation unit, bytes: a frame occupies ceil(len / cell) cells.
    pub cell: u32,
    /// Independent buffer slices (ports are divided evenly among them).
    pub slices: u32,
    /// Ingress lossless priority-group dynamic threshold, SAI log2 alpha.
    pub pg_alpha_log2: i8,
    /// Egress lossy queue dynamic threshold, SAI log2 alpha.
    pub queue_alpha_log2: i8,
    /// Headroom per lossless PG when the profile fixes it (None: computed from the cable).
    pub headroom: Option<u64>,
    /// Most front-panel ports the ASIC can drive (all lanes broken out to single-lane ports).
    pub ports: u32,
    /// PFC XON hysteresis of a lossless PG: it resumes once its shared use is this far below
    /// its XOFF threshold (SONiC `xon_offset`, SAI `SAI_BUFFER_PROFILE_ATTR_XON_OFFSET_TH`).
    pub xon_offset: u64,
}

impl Asic {
    pub fn profile(self) -> Profile {
        match self {
            // 32 MB (Broadcom BCM56870 product brief: 32 x 100GbE or 128 x 25GbE); 256 B cells
            // (our estimate); SONiC's Broadcom templates: lossy egress dynamic_th 3, lossless
            // PG dynamic_th -4.
            Asic::Trident3 => Profile {
                buffer: 32_000_000,
                cell: 256,
                slices: 1,
                pg_alpha_log2: -4,
                queue_alpha_log2: 3,
                headroom: None,
                ports: 128,
                // SONiC's TD3 48x25G + 8x100G templates: xon 0, xon_offset 3584 B on every row
                // (sonic-buildimage PR #3446 for the AS7326-56X; the same values on master for
                // the Quanta IX8-56X, device/quanta/x86_64-quanta_ix8_rglbmc-r0/.../
                // pg_profile_lookup.ini).
                xon_offset: 3584,
            },
            // 42 MB fully shared (NVIDIA SN3700C datasheet; up to 128 ports with breakout);
            // SONiC Mellanox default_dynamic_th 0.
            Asic::Spectrum2 => Profile {
                buffer: 42_000_000,
                cell: 144,
                slices: 1,
                pg_alpha_log2: 0,
                queue_alpha_log2: 0,
                headroom: None,
                ports: 128,
                // Mellanox's SAI programs a lossless PG's XOFF and XON thresholds to the same
                // value (mlnx_sai_buffer.c with SONiC's size = xon + xoff; sonic-mgmt
                // tests/qos/files/qos.md: "xon_th and xoff_th are configured to the same
                // value"): no hysteresis.
                xon_offset: 0,
            },
            // 16 MB (SN2700 datasheet: 32 x 100GbE, up to 64 ports split); cell 96 B (our
            // estimate).
            Asic::Spectrum => Profile {
                buffer: 16_000_000,
                cell: 96,
                slices: 1,
                pg_alpha_log2: 0,
                queue_alpha_log2: 0,
                headroom: None,
                ports: 64,
                // As Spectrum-2: equal XOFF and XON thresholds.
                xon_offset: 0,
            },
            // 16 MB in four 4 MB ingress/egress slices (Broadcom BCM56960 brief: 32 x 100GbE or
            // 128 x 25GbE); 208 B cells.
            Asic::Tomahawk => Profile {
                buffer: 16_000_000,
                cell: 208,
                slices: 4,
                pg_alpha_log2: -4,
                queue_alpha_log2: 3,
                headroom: None,
                ports: 128,
                // SONiC's Tomahawk profiles (device/common/profiles/th/gen/BALANCED/
                // pg_profile_lookup.ini, Arista 7060CX-32S): xon 2288, xon_offset 2288 B.
                xon_offset: 2288,
            },
            // A few MB and a fixed small headroom: PFC cannot cover a 100G cable, so bursts
            // overrun it (our estimate of a 98DX8525-class campus ASIC; the CRS504-4XQ has four
            // QSFP28 cages, 16 ports broken out).
            Asic::Campus => Profile {
                buffer: 2_000_000,
                cell: 256,
                slices: 1,
                pg_alpha_log2: -2,
                queue_alpha_log2: 0,
                headroom: Some(8_192),
                ports: 16,
                // Our estimate: the 4608 B (18 cells of 256 B) of SONiC's Broadcom TD3
                // 7050CX3 profile.
                xon_offset: 4608,
            },
        }
    }
}
