//! Shared-buffer memory management unit (MMU) of a switch ASIC.
//!
//! Cell-based accounting as Broadcom's and NVIDIA's MMUs and the SAI buffer model describe it
//! (SAI "Buffer management" spec; SONiC buffer design): every frame occupies ceil(len / cell)
//! cells, charged to exactly one account:
//!
//! 1. the reserved minimum of its ingress priority group (lossless) or egress queue (lossy);
//! 2. else the shared pool, if its PG (lossless, ingress) or queue (lossy, egress) stays under
//!    its dynamic threshold, alpha x (free shared cells) (Choudhury and Hahne, "Dynamic queue
//!    length thresholds for shared-memory packet switches", IEEE/ACM ToN 1998);
//! 3. else, lossless only, the PG's headroom, outside the shared pool, which absorbs what
//!    arrives after the PFC XOFF: reserved per PG, or drawn from a shared headroom pool (SAI
//!    `SAI_BUFFER_POOL_ATTR_XOFF_SIZE`, SONiC's `BUFFER_POOL.ingress_lossless_pool.xoff`),
//!    each PG up to its own headroom and all of them together up to the pool, which is
//!    usually smaller than their sum (over-subscribed: not every port congests at once);
//! 4. else it is dropped: lossy above its threshold, lossless beyond its headroom.
//!
//! With S congested queues and B free cells, each settles at alpha B / (1 + alpha S).
//!
//! The shared pool is the buffer less what is reserved (every PG's and queue's minimum, and
//! the headroom), or given as it is: SONiC's `BUFFER_POOL.<pool>.size` is the shared pool the
//! SAI creates, its reserved space already outside it (sonic-buildimage's
//! `buffers_defaults_*.j2` templates size it as the buffer less the reserved and headroom
//! space; SONiC's shared-headroom-pool and reclaim-reserved-buffer designs).
//! Slices (Tomahawk's four XPEs, the two ITMs of Tomahawk 4 and 5) are independent pools, the
//! ports divided evenly among them. A lossless PG's cells are charged to its ingress port's
//! slice, a lossy queue's to its egress port's. Tomahawk 4 and 5 store a frame in its ingress
//! port's ITM (our reading of Broadcom's SDK: THDI accounting per ITM keyed by ingress port,
//! an egress queue's use summed over both ITMs), so charging lossy cells by egress port is
//! an approximation there.

use crate::drop::DropReason;
use crate::packet::Charge;
use crate::prio::PrioMask;

/// A dynamic threshold: alpha x free cells (alpha may be infinite: the whole free pool).
#[inline]
fn dt(alpha: f64, free: u64) -> f64 {
    if alpha.is_infinite() {
        if free > 0 { f64::INFINITY } else { 0.0 }
    } else {
        alpha * free as f64
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct PgAcct {
    min: u32,
    shared: u32,
    headroom: u32,
    /// The most shared and headroom cells held at once (SAI's PG shared and XOFF-room
    /// watermarks, `show priority-group watermark shared / headroom`).
    peak_shared: u32,
    peak_headroom: u32,
}

#[derive(Debug, Clone, Copy, Default)]
struct QueueAcct {
    min: u32,
    shared: u32,
    /// The most shared cells held at once (SAI_QUEUE_STAT_SHARED_WATERMARK_BYTES).
    peak_shared: u32,
}

/// Resolved MMU parameters (cells).
#[derive(Debug, Clone)]
pub struct MmuParams {
    pub buffer: u64,
    pub cell: u32,
    pub slices: u32,
    pub pg_alpha: f64,
    pub queue_alpha: f64,
    pub pg_min: u64,
    pub queue_min: u64,
    /// Lossless priorities.
    pub lossless: PrioMask,
    /// Static XOFF threshold on PG shared use, bytes (None: dynamic).
    pub xoff: Option<u64>,
    pub xon_offset: u64,
    /// The shared pool as given (SONiC's `BUFFER_POOL` size), reserved space outside it
    /// (None: the buffer less what is reserved).
    pub shared_pool: Option<u64>,
    /// A shared headroom pool: lossless PGs take headroom from it rather than reserving it.
    pub headroom_pool: Option<u64>,
    /// The lossless PGs that are credit-flow-controlled (`crate::cbfc`): the sender never
    /// sends beyond such a PG's allocation, so it takes shared cells while the pool has them,
    /// with no XOFF threshold and no headroom. The other lossless PGs run PFC.
    pub credit_flow: PrioMask,
}

#[derive(Debug, Clone)]
pub struct Mmu {
    cell: u32,
    pg_alpha: f64,
    queue_alpha: f64,
    pg_min: u32,
    queue_min: u32,
    lossless: PrioMask,
    credit_flow: PrioMask,
    xoff: Option<u32>,
    xon_offset: u32,
    slice_of: Vec<u8>,
    shared_size: Vec<u64>,
    shared_used: Vec<u64>,
    pg: Vec<[PgAcct; 8]>,
    queue: Vec<[QueueAcct; 8]>,
    headroom: Vec<u32>,
    /// The shared headroom pool of each slice, and its cells in use (None: each PG's headroom
    /// is its own).
    headroom_pool: Option<Vec<(u64, u64)>>,
}

impl Mmu {
    /// Lay out the buffer for a switch whose ports get `headroom[i]` bytes per paused
    /// lossless PG. Fails (with the shortfall) when what is reserved, with the shared pool if
    /// it is given, exceeds the buffer. A layout admits nothing until [`Mmu::fresh`] starts
    /// its accounting.
    pub fn new(p: &MmuParams, headroom: &[u64]) -> Result<Mmu, String> {
        let ports = headroom.len();
        let cells = |b: u64| b.div_ceil(p.cell as u64);
        let slices = p.slices.max(1) as usize;
        let slice_of: Vec<u8> = (0..ports).map(|i| (i * slices / ports.max(1)) as u8).collect();
        let lossless = p.lossless.len() as u64;
        // Only a paused PG needs headroom: a credited one never receives beyond its credit.
        let paused = (p.lossless & !p.credit_flow).len() as u64;
        let per_slice = |b: u64| cells(b) / slices as u64;
        // Cells each slice holds outside its shared pool: minimums, and headroom.
        let mut reserved = vec![p.headroom_pool.map_or(0, per_slice); slices];
        for (i, &h) in headroom.iter().enumerate() {
            let own = if p.headroom_pool.is_some() { 0 } else { cells(h) };
            reserved[slice_of[i] as usize] +=
                paused * own + lossless * cells(p.pg_min) + (8 - lossless) * cells(p.queue_min);
        }
        let buffer = per_slice(p.buffer);
        let mut shared_size = Vec::with_capacity(slices);
        for r in &reserved {
            let shared = p.shared_pool.map_or(buffer.saturating_sub(*r), per_slice);
            if shared == 0 || shared + r > buffer {
                let given = match p.shared_pool {
                    Some(s) => format!("a shared pool of {s} B and "),
                    None => String::new(),
                };
                return Err(format!(
                    "the buffer ({} B in {} slice(s)) cannot hold {given}the reserved headroom and minimums of {ports} ports ({} B per slice)",
                    p.buffer,
                    slices,
                    r * p.cell as u64
                ));
            }
            shared_size.push(shared);
        }
        Ok(Mmu {
            cell: p.cell,
            pg_alpha: p.pg_alpha,
            queue_alpha: p.queue_alpha,
            pg_min: cells(p.pg_min) as u32,
            queue_min: cells(p.queue_min) as u32,
            lossless: p.lossless,
            credit_flow: p.credit_flow,
            xoff: p.xoff.map(|x| cells(x) as u32),
            xon_offset: cells(p.xon_offset) as u32,
            shared_used: vec![0; slices],
            shared_size,
            slice_of,
            pg: Vec::new(),
            queue: Vec::new(),
            headroom: headroom.iter().map(|&h| cells(h) as u32).collect(),
            headroom_pool: p.headroom_pool.map(|h| vec![(per_slice(h), 0); slices]),
        })
    }

    /// This layout with its accounting started: every PG and queue empty. A layout (what
    /// [`Mmu::new`] gives, and what a variant keeps for each switch) holds no per-port
    /// accounting, so the copy each run makes is the only one (at 65,536 hosts, 83 MB).
    pub fn fresh(&self) -> Mmu {
        let ports = self.headroom.len();
        Mmu {
            pg: vec![[PgAcct::default(); 8]; ports],
            queue: vec![[QueueAcct::default(); 8]; ports],
            ..self.clone()
        }
    }

    /// Drop the accounting, keeping the layout: a switch another thread's partition runs
    /// (`crate::sim::parallel`) is never admitted to here, and its state comes from there.
    pub fn forget(&mut self) {
        self.pg = Vec::new();
        self.queue = Vec::new();
    }

    /// The headroom one lossless class holds across the switch's ports, bytes (reserved per
    /// PG, or its claim on a shared headroom pool).
    pub fn headroom_bytes(&self) -> u64 {
        self.headroom.iter().map(|&h| h as u64 * self.cell as u64).sum()
    }

    /// The headroom one lossless PG of local port `port` may fill above its XOFF, bytes
    /// (0 for a port the switch does not have).
    pub fn headroom_of(&self, port: usize) -> u64 {
        self.headroom
            .get(port)
            .map_or(0, |&h| h as u64 * self.cell as u64)
    }

    /// The occupancy, bytes, at which a lone congested class stops taking shared buffer, on
    /// the smallest slice: a lossless PG's XOFF (static, or alpha / (1 + alpha) of the pool
    /// when it is the only one using it: Choudhury and Hahne's steady state) or a lossy
    /// queue's limit, with its reserved minimum. For the configuration check.
    pub fn lone_limit(&self, lossless: bool) -> u64 {
        let pool = self.shared_size.iter().copied().min().unwrap_or(0) as f64;
        let (alpha, min) = if lossless {
            (self.pg_alpha, self.pg_min)
        } else {
            (self.queue_alpha, self.queue_min)
        };
        let shared = match (lossless, self.xoff) {
            (true, Some(x)) => x as f64,
            _ if alpha.is_infinite() => pool,
            _ => pool * alpha / (1.0 + alpha),
        };
        (shared as u64 + min as u64) * self.cell as u64
    }

    #[inline]
    pub fn cells(&self, frame: u16) -> u32 {
        (frame as u32).div_ceil(self.cell)
    }

    #[inline]
    fn free(&self, slice: usize) -> u64 {
        self.shared_size[slice] - self.shared_used[slice]
    }

    /// The XOFF threshold of a lossless PG on shared cells, now.
    #[inline]
    fn pg_threshold(&self, slice: usize) -> f64 {
        match self.xoff {
            Some(x) => x as f64,
            None => dt(self.pg_alpha, self.free(slice)),
        }
    }

    #[inline]
    pub fn is_lossless(&self, prio: u8) -> bool {
        self.lossless.contains(prio)
    }

    /// The slice a frame's shared cells are charged to: a lossless PG's ingress slice (where
    /// its headroom is reserved and its XOFF decided), a lossy queue's egress slice.
    #[inline]
    fn slice(&self, inp: usize, out: usize, prio: u8) -> usize {
        (if self.is_lossless(prio) {
            self.slice_of[inp]
        } else {
            self.slice_of[out]
        }) as usize
    }

    /// The accounting row and the slice's shared count a frame's release will update (for a
    /// prefetch hint): its ingress PG's when `prio` is lossless, else its egress queue's.
    #[inline]
    pub fn release_hint(&self, inp: usize, out: usize, prio: u8) -> [*const u8; 2] {
        let p = (prio as usize).min(7);
        // Rows checked: a partition forgets the rows of switches it does not run.
        let row = if self.is_lossless(prio) {
            self.pg.get(inp).map(|r| &r[p] as *const PgAcct as *const u8)
        } else {
            self.queue
                .get(out)
                .map(|r| &r[p] as *const QueueAcct as *const u8)
        };
        let shared = self.shared_used.as_ptr().wrapping_add(self.slice(inp, out, prio));
        [row.unwrap_or(std::ptr::null()), shared as *const u8]
    }

    /// Admit a frame arriving on local port `inp` for local egress `out` at `prio`.
    pub fn admit(&mut self, inp: usize, out: usize, prio: u8, frame: u16) -> Result<Charge, DropReason> {
        let c = self.cells(frame);
        let (p, slice) = (prio as usize, self.slice(inp, out, prio));
        let fits_pool = self.shared_used[slice] + c as u64 <= self.shared_size[slice];
        if self.is_lossless(prio) {
            let pg = self.pg[inp][p];
            if pg.min + c <= self.pg_min {
                self.pg[inp][p].min += c;
                return Ok(Charge::PgMin);
            }
            let credited = self.credit_flow.contains(prio);
            if fits_pool && (credited || (pg.shared as f64) < self.pg_threshold(slice)) {
                let g = &mut self.pg[inp][p];
                g.shared += c;
                g.peak_shared = g.peak_shared.max(g.shared);
                self.shared_used[slice] += c as u64;
                return Ok(Charge::Shared);
            }
            if !credited && pg.headroom + c <= self.headroom[inp] && self.take_headroom(slice, c) {
                let g = &mut self.pg[inp][p];
                g.headroom += c;
                g.peak_headroom = g.peak_headroom.max(g.headroom);
                return Ok(Charge::Headroom);
            }
            return Err(DropReason::HeadroomExceeded);
        }
        let q = self.queue[out][p];
        if q.min + c <= self.queue_min {
            self.queue[out][p].min += c;
            return Ok(Charge::QueueMin);
        }
        if fits_pool && (q.shared as f64) < dt(self.queue_alpha, self.free(slice)) {
            let q = &mut self.queue[out][p];
            q.shared += c;
            q.peak_shared = q.peak_shared.max(q.shared);
            self.shared_used[slice] += c as u64;
            return Ok(Charge::Shared);
        }
        Err(DropReason::LossyBufferFull)
    }

    /// The frame left the switch: give its cells back.
    ///
    /// A lossy queue gets back exactly what the frame was charged. A lossless priority group
    /// is a set of counters, not a list of frames: its departing cells come out of its
    /// headroom first, then its shared use, then its reserved minimum, whichever frame they
    /// were charged to on arrival. So the PG's occupancy, not the order its frames wait in,
    /// decides XON, as an ASIC's per-PG counters do (HPCC's ns-3 model of a Broadcom MMU,
    /// `SwitchMmu::RemoveFromIngressAdmission`; SAI `SAI_BUFFER_PROFILE_ATTR_XON_TH`: XON once
    /// the PG's headroom is free again and its use is under the XON threshold).
    pub fn release(&mut self, inp: usize, out: usize, prio: u8, frame: u16, charge: Charge) {
        let c = self.cells(frame);
        let (p, slice) = (prio as usize, self.slice(inp, out, prio));
        if self.is_lossless(prio) {
            let pg = &mut self.pg[inp][p];
            let from_headroom = c.min(pg.headroom);
            let from_shared = (c - from_headroom).min(pg.shared);
            pg.headroom -= from_headroom;
            pg.shared -= from_shared;
            pg.min -= c - from_headroom - from_shared;
            self.shared_used[slice] -= from_shared as u64;
            if let Some(pool) = &mut self.headroom_pool {
                pool[slice].1 -= from_headroom as u64;
            }
            return;
        }
        match charge {
            Charge::QueueMin => self.queue[out][p].min -= c,
            Charge::Shared => {
                self.shared_used[slice] -= c as u64;
                self.queue[out][p].shared -= c;
            }
            Charge::PgMin | Charge::Headroom | Charge::None => {}
        }
    }

    /// Take `c` cells of the shared headroom pool of `slice`, if there is one (true without).
    #[inline]
    fn take_headroom(&mut self, slice: usize, c: u32) -> bool {
        let Some(pool) = &mut self.headroom_pool else {
            return true;
        };
        let (size, used) = &mut pool[slice];
        if *used + c as u64 > *size {
            return false;
        }
        *used += c as u64;
        true
    }

    /// A lossless PG that must be in XOFF: in its headroom, or at its shared threshold.
    pub fn wants_xoff(&self, inp: usize, prio: u8) -> bool {
        if self.credit_flow.contains(prio) {
            return false; // CBFC: no pause frames
        }
        let pg = self.pg[inp][prio as usize];
        let slice = self.slice_of[inp] as usize;
        pg.headroom > 0 || pg.shared as f64 >= self.pg_threshold(slice)
    }

    /// A PG in XOFF that may resume: headroom empty and shared use `xon_offset` below threshold.
    pub fn allows_xon(&self, inp: usize, prio: u8) -> bool {
        let pg = self.pg[inp][prio as usize];
        let slice = self.slice_of[inp] as usize;
        pg.headroom == 0
            && (pg.shared + self.xon_offset) as f64 <= self.pg_threshold(slice).max(self.xon_offset as f64)
    }

    /// Bytes held by local port `inp`'s lossless ingress priority groups, and their XOFF
    /// threshold now (shared use at which they pause; their minimum is reserved below it).
    pub fn pg_bytes_and_xoff(&self, inp: usize) -> (u64, u64, u32) {
        let cells: u64 = self
            .lossless
            .iter()
            .map(|p| {
                let g = self.pg[inp][p as usize];
                (g.min + g.shared + g.headroom) as u64
            })
            .sum();
        let slice = self.slice_of[inp] as usize;
        let xoff = self.pg_threshold(slice) as u64 + self.pg_min as u64;
        (cells * self.cell as u64, xoff * self.cell as u64, slice as u32)
    }

    /// How far below XOFF a paused PG resumes (its XON hysteresis), bytes.
    pub fn xon_offset_bytes(&self) -> u64 {
        self.xon_offset as u64 * self.cell as u64
    }

    /// Bytes held for lossy queue `prio` of local port `out` (shared + min).
    pub fn queue_bytes(&self, out: usize, prio: u8) -> u64 {
        let q = self.queue[out][prio as usize];
        (q.min + q.shared) as u64 * self.cell as u64
    }

    /// The most shared and headroom bytes lossless priority group `prio` of local port `inp`
    /// held at once.
    pub fn pg_watermarks(&self, inp: usize, prio: u8) -> (u64, u64) {
        let g = self.pg[inp][prio as usize];
        let b = |c: u32| c as u64 * self.cell as u64;
        (b(g.peak_shared), b(g.peak_headroom))
    }

    /// The most shared bytes lossy queue `prio` of local port `out` held at once.
    pub fn queue_watermark(&self, out: usize, prio: u8) -> u64 {
        self.queue[out][prio as usize].peak_shared as u64 * self.cell as u64
    }

    /// Free shared bytes in the slice of local port `port`.
    pub fn free_bytes(&self, port: usize) -> u64 {
        self.free(self.slice_of[port] as usize) * self.cell as u64
    }

    /// Shared-pool size in bytes of the slice of local port `port`.
    pub fn shared_bytes(&self, port: usize) -> u64 {
        self.shared_size[self.slice_of[port] as usize] * self.cell as u64
    }

    /// The shared pool's size in bytes, all slices together.
    pub fn shared_pool_bytes(&self) -> u64 {
        self.shared_size.iter().sum::<u64>() * self.cell as u64
    }

    /// True when nothing is held (end-of-run check).
    pub fn is_empty(&self) -> bool {
        self.shared_used.iter().all(|&u| u == 0)
            && self.headroom_pool.iter().flatten().all(|&(_, used)| used == 0)
            && self
                .pg
                .iter()
                .flatten()
                .all(|a| a.min == 0 && a.shared == 0 && a.headroom == 0)
            && self.queue.iter().flatten().all(|a| a.min == 0 && a.shared == 0)
    }
}

#[cfg(test)]
mod tests;
