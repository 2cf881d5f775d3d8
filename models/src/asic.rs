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
    /// Broadcom Trident 3 (Edgecore AS7726-32X, AS7326-56X): 32 MB shared (31.5 MB usable).
    #[default]
    Trident3,
    /// NVIDIA Spectrum-2 (SN3700C): 42 MB fully shared.
    Spectrum2,
    /// NVIDIA Spectrum (SN2700): 16 MB.
    Spectrum,
    /// Broadcom Tomahawk: 16 MB as four 4 MB slices (one per pipeline).
    Tomahawk,
    /// NVIDIA Spectrum-3 (SN4700, SN4600C): 64 MB fully shared, 12.8 Tb/s.
    Spectrum3,
    /// NVIDIA Spectrum-4 (SN5600, SN5400): about 160 MB fully shared, 51.2 Tb/s.
    Spectrum4,
    /// Broadcom Tomahawk 4 (BCM56990; Dell Z9664F, Arista 7060DX5): 117.6 MB in two ITMs,
    /// 25.6 Tb/s.
    Tomahawk4,
    /// Broadcom Tomahawk 5 (BCM78900; Arista 7060X6, Dell Z9864F): 167.5 MB in two ITMs,
    /// 51.2 Tb/s.
    Tomahawk5,
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
            // 32 MB (Broadcom BCM56870 product brief: 32 x 100GbE or 128 x 25GbE), of which
            // 31.5 MB usable: 129,024 cells of 256 B in its one XPE (Broadcom's OpenBCM SDK,
            // include/soc/trident3.h: _TD3_MMU_TOTAL_CELLS_PER_XPE 129024 of 131072 physical,
            // _TD3_MMU_BYTES_PER_CELL 256, _TD3_XPES_PER_DEV 1). SONiC's AS7326-56X template
            // pools add up to 32,575,488 B of it. SONiC's Broadcom templates: lossy egress
            // dynamic_th 3, lossless PG dynamic_th -4.
            Asic::Trident3 => Profile {
                buffer: 129_024 * 256,
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
            // The 400G/800G generation. Cells, alphas and xon_offset from sonic-buildimage at
            // commit 086b03bd70f9 (paths below); Broadcom's MMU constants from its SDKLT
            // headers. A buffer "estimate" is a widely quoted total that no vendor datasheet
            // we read confirms; SONiC's shared pools (a little smaller: reserves come out of
            // the total) agree with it.
            //
            // Spectrum-3: 64 MB (our estimate, the commonly quoted figure; SONiC ACS-MSN4700
            // buffers_defaults_t1.j2 carves an egress pool of 60,817,392 B = 422,343 cells of
            // 144 B out of it); 144 B cells (platform/mellanox/asic_table.j2); fully shared
            // (one ingress and one egress pool for the whole chip in SONiC). Lossless PG dynamic_th 0
            // (ACS-MSN4700/pg_profile_lookup.ini, threshold 0 on every row); lossy queue
            // dynamic_th 3 (ACS-MSN2700/buffers_defaults_objects.j2 `q_lossy_profile`, which
            // the SN4700 SKU links to). 128 ports: SKU Mellanox-SN4700-C128, 128 x 100G.
            Asic::Spectrum3 => Profile {
                buffer: 64_000_000,
                cell: 144,
                slices: 1,
                pg_alpha_log2: 0,
                queue_alpha_log2: 3,
                headroom: None,
                ports: 128,
                // As Spectrum-2: equal XOFF and XON thresholds.
                xon_offset: 0,
            },
            // Spectrum-4: 160 MB (our estimate: SONiC x86_64-nvidia_sn5600-r0/ACS-SN5600/
            // buffers_defaults_t1.j2 carves an egress pool of 158,229,504 B = 824,112 cells of
            // 192 B, so the total is at least that); 192 B cells (asic_table.j2); "fully
            // shared and monolithic" (NVIDIA's 2022 launch as Converge Digest and Linley
            // report it). Lossless PG
            // dynamic_th 0 (ACS-SN5600/pg_profile_lookup.ini); lossy queue dynamic_th 3 (the
            // same `q_lossy_profile`). 256 ports: SKUs C256S1 (256 x 100G) and V256
            // (256 x 200G).
            Asic::Spectrum4 => Profile {
                buffer: 160_000_000,
                cell: 192,
                slices: 1,
                pg_alpha_log2: 0,
                queue_alpha_log2: 3,
                headroom: None,
                ports: 256,
                // As Spectrum-2: equal XOFF and XON thresholds.
                xon_offset: 0,
            },
            // Tomahawk 4: 117,574,568 B usable = 2 ITMs x 231,446 cells x 254 B (SDKLT
            // bcm56990_b0_tm_thd_internal.h: TH4_B0_MMU_TOTAL_CELLS_PER_ITM 231446,
            // TH4_B0_MMU_BYTES_PER_CELL 254, SOC_MMU_CFG_ITM_MAX 2; 123.8 MB physical). Dell's
            // SONiC pool is 113,620,296 B (DellEMC-Z9664f-O64/buffers_defaults_t1.j2). Each
            // ITM (ingress traffic manager) is one slice here; see mmu.rs for which slice a
            // frame is charged to. Lossless PG dynamic_th 0 and lossy queue dynamic_th 2
            // (Dell Z9664F pg_profile_lookup.ini and buffers_defaults_t1.j2
            // `egress_lossy_profile`). 256 ports (256 x 100G: Linley Newsletter 2019-12-17,
            // "Tomahawk 4 Switch First to 25.6Tbps").
            Asic::Tomahawk4 => Profile {
                buffer: 117_574_568,
                cell: 254,
                slices: 2,
                pg_alpha_log2: 0,
                queue_alpha_log2: 2,
                headroom: None,
                ports: 256,
                // Dell Z9664F pg_profile_lookup.ini: xon 9144, xon_offset 9144 B (36 cells)
                // on every row.
                xon_offset: 9144,
            },
            // Tomahawk 5: 167,546,528 B = 2 ITMs x 329,816 cells x 254 B, the shared limit
            // of Arista's 7060X6-64PE-O128S2 (th5-a7060x6-64pe.config.bcm, equal to its
            // buffers_defaults_t1.j2 static_th); Dell's Z9864F says 165,867,080 B. Broadcom's
            // own total we did not find. 254 B cells: every TH5 SONiC size is a multiple of
            // 254 (1778, 3556, 18796). Lossless PG dynamic_th 0, lossy queue dynamic_th 0
            // (Dell-Z9864f-O64 and Arista-7060X6-64PE-O128S2 t1 templates). 512 ports: SKU
            // Arista-7060X6-64PE-B-C512S2, 512 x 100G on single lanes.
            Asic::Tomahawk5 => Profile {
                buffer: 167_546_528,
                cell: 254,
                slices: 2,
                pg_alpha_log2: 0,
                queue_alpha_log2: 0,
                headroom: None,
                ports: 512,
                // Dell-Z9864f-O64 and Arista-7060X6-64PE-O128S2 pg_profile_lookup.ini: xon 0,
                // xon_offset 3556 B (14 cells) on every row.
                xon_offset: 3556,
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
