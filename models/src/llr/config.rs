//! An LLR profile: what a cable's `llr` key says, resolved to what each direction runs
//! (sources as in the parent module: \[SAI\], \[HLD\]).

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use sim_core::{BitRate, Bytes, Duration};

/// The replay buffer's default depth in time at the line rate: \[HLD\]'s sample profiles hold
/// 1.18 to 1.25 us of the line rate on a 5 m cable (31,184 B at 200G, 58,768 B at 400G).
pub const BUFFER_TIME: Duration = Duration::from_ns(1_200);
/// Bytes per frame the default frame limit allows: \[HLD\]'s samples give one frame per 511 B
/// (61 frames for 31,184 B; 115 for 58,768 B; 264 for 135,000 B).
pub const BYTES_PER_FRAME: u64 = 512;
/// The replay timer of \[HLD\]'s sample profiles: 5,000 ns (5,500 ns on 40 m cables).
pub const REPLAY_TIMER: Duration = Duration::from_ns(5_000);
/// Replays in a row before the sender flushes, as \[HLD\]'s samples set it (SAI's default is 1).
pub const REPLAY_COUNT: u32 = 3;
/// Bytes of received frames between two LLR_ACKs: SAI's `CTLOS_TARGET_SPACING` default.
pub const ACK_SPACING: u32 = 2_048;
/// Most replay timer \[HLD\] allows: 65,535 ns.
const MAX_REPLAY_TIMER: Duration = Duration::from_ns(65_535);
/// Most `pcs_lost_timeout` and `data_age_timeout` \[HLD\] allows: 4.29 s.
const MAX_TIMEOUT: Duration = Duration::from_ns(4_290_000_000);
/// Most frames \[HLD\] allows outstanding (524,288).
const MAX_FRAMES: u32 = 524_288;

/// `llr` on a cable as written: `true`, `[true, false]` (each end's own), or a table of
/// settings (both ends on).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct LlrCable {
    /// Each end's LLR on or off (`a`, `b`).
    pub ends: [bool; 2],
    pub settings: LlrSettings,
}

/// An LLR profile's settings, as SONiC's `LLR_PROFILE` names them \[HLD\]; unset: the defaults.
#[derive(Debug, Clone, Copy, PartialEq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LlrSettings {
    /// Replay buffer in bytes (`max_outstanding_bytes`).
    #[serde(default)]
    pub buffer: Option<Bytes>,
    /// Replay buffer in frames (`max_outstanding_frames`).
    #[serde(default)]
    pub frames: Option<u32>,
    /// Replay timer (`max_replay_timer`).
    #[serde(default)]
    pub replay_timer: Option<Duration>,
    /// Replays in a row before a flush (`max_replay_count`).
    #[serde(default)]
    pub replay_count: Option<u32>,
    /// How long the cable may be down before the sender flushes (`pcs_lost_timeout`; SAI's
    /// `PCS_LOST_TIMEOUT`): within it the buffer is kept and replayed when the cable is back.
    #[serde(default)]
    pub pcs_lost_timeout: Option<Duration>,
    /// How long a frame may wait in the replay buffer unacknowledged before the sender
    /// flushes (`data_age_timeout`; SAI's `DATA_AGE_TIMEOUT`); zero: no limit.
    #[serde(default)]
    pub data_age_timeout: Option<Duration>,
    /// Bytes accepted between two LLR_ACKs (`ctlos_spacing_bytes`; SAI's
    /// `CTLOS_TARGET_SPACING`), 400 B to 16 KiB.
    #[serde(default)]
    pub ctlos_spacing: Option<Bytes>,
    /// What the sender does with new frames while it waits for its LLR_INIT to be echoed
    /// (`init_action`; SAI's `INIT_LLR_FRAME_ACTION`, default best effort).
    #[serde(default)]
    pub init_action: Option<FrameAction>,
    /// What the sender does with new frames in the FLUSH state (`flush_action`; SAI's
    /// `FLUSH_LLR_FRAME_ACTION`, default best effort).
    #[serde(default)]
    pub flush_action: Option<FrameAction>,
    /// Whether a flushed sender re-initialises at once (SAI's `RE_INIT_ON_FLUSH`; SONiC's
    /// llrorch always sets it, the default here), or stays in FLUSH until management acts.
    #[serde(default)]
    pub re_init_on_flush: Option<bool>,
}

/// SAI's `sai_llr_frame_action_t`: what an LLR sender does with a new frame while it cannot
/// protect it (INIT, FLUSH) \[SAI\].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FrameAction {
    /// Send it as an ordinary frame, without a sequence number (`BEST_EFFORT`).
    #[default]
    BestEffort,
    /// Hold it (and every frame behind it) until the link is back in ADVANCE (`BLOCK`).
    Block,
    /// Drop it, counting `llr_tx_discard` (`DISCARD`).
    Discard,
}

impl FrameAction {
    /// Every action, as TOML and SONiC's `LLR_PROFILE` write it.
    pub const ALL: [FrameAction; 3] = [FrameAction::BestEffort, FrameAction::Block, FrameAction::Discard];

    /// Its name in a scenario and in SONiC (`best_effort`, `block`, `discard`).
    pub fn name(self) -> &'static str {
        match self {
            FrameAction::BestEffort => "best_effort",
            FrameAction::Block => "block",
            FrameAction::Discard => "discard",
        }
    }
}

impl LlrSettings {
    /// The settings the model can run, or the setting that it cannot (its TOML name) and why.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        if let Some(b) = self.buffer
            && !(crate::packet::MIN_FRAME as u64..=u32::MAX as u64).contains(&b.0)
        {
            return Err((
                "buffer",
                format!("must be 64B to 4294967295B (SAI's u32), got {b}"),
            ));
        }
        if let Some(f) = self.frames
            && !(1..=MAX_FRAMES).contains(&f)
        {
            return Err(("frames", format!("must be 1 to {MAX_FRAMES}, got {f}")));
        }
        if let Some(t) = self.replay_timer
            && (t == Duration::ZERO || t > MAX_REPLAY_TIMER)
        {
            return Err((
                "replay_timer",
                format!("must be over 0 and at most 65535ns, got {t}"),
            ));
        }
        if let Some(c) = self.replay_count
            && !(1..=255).contains(&c)
        {
            return Err(("replay_count", format!("must be 1 to 255, got {c}")));
        }
        for (k, t) in [
            ("pcs_lost_timeout", self.pcs_lost_timeout),
            ("data_age_timeout", self.data_age_timeout),
        ] {
            if let Some(t) = t
                && t > MAX_TIMEOUT
            {
                return Err((k, format!("must be at most 4290000000ns (SAI's range), got {t}")));
            }
        }
        if let Some(b) = self.ctlos_spacing
            && !(400..=16_384).contains(&b.0)
        {
            return Err((
                "ctlos_spacing",
                format!("must be 400B to 16384B ([HLD]'s range), got {b}"),
            ));
        }
        Ok(())
    }
}

impl<'de> Deserialize<'de> for LlrCable {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = LlrCable;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(
                    "true, false, [a's, b's] or a table { buffer, frames, replay_timer, replay_count, pcs_lost_timeout, data_age_timeout, ctlos_spacing, init_action, flush_action, re_init_on_flush }",
                )
            }
            fn visit_bool<E: de::Error>(self, on: bool) -> Result<LlrCable, E> {
                Ok(LlrCable {
                    ends: [on, on],
                    settings: LlrSettings::default(),
                })
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<LlrCable, A::Error> {
                let a = s
                    .next_element()?
                    .ok_or_else(|| de::Error::invalid_length(0, &self))?;
                let b = s
                    .next_element()?
                    .ok_or_else(|| de::Error::invalid_length(1, &self))?;
                if s.next_element::<bool>()?.is_some() {
                    return Err(de::Error::invalid_length(3, &self));
                }
                Ok(LlrCable {
                    ends: [a, b],
                    settings: LlrSettings::default(),
                })
            }
            fn visit_map<A: MapAccess<'de>>(self, m: A) -> Result<LlrCable, A::Error> {
                let settings = LlrSettings::deserialize(de::value::MapAccessDeserializer::new(m))?;
                Ok(LlrCable {
                    ends: [true, true],
                    settings,
                })
            }
        }
        d.deserialize_any(V)
    }
}

/// One cable direction's LLR profile, resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LlrConfig {
    /// Most frame bytes outstanding (sent, not yet acknowledged).
    pub buffer: u64,
    /// Most frames outstanding.
    pub frames: u32,
    pub replay_timer: Duration,
    pub replay_count: u32,
    /// Zero: the buffer is flushed as the cable goes down.
    pub pcs_lost_timeout: Duration,
    /// Zero: no limit.
    pub data_age_timeout: Duration,
    /// Bytes the receiver accepts between two ACKs.
    pub ctlos_spacing: u32,
    pub init_action: FrameAction,
    pub flush_action: FrameAction,
    pub re_init_on_flush: bool,
}

impl LlrCable {
    /// The profile both ends run on a cable of `rate` with one-way `delay` (propagation and
    /// FEC), or None when an end has LLR off (an LLR_INIT never echoed leaves the sender in
    /// INIT, sending frames best effort \[SAI\]: the cable runs without LLR). Bad numbers are
    /// errors naming `key.llr.<setting>`.
    pub fn resolve(
        &self,
        key: &str,
        rate: BitRate,
        delay: Duration,
    ) -> Result<Option<LlrConfig>, crate::error::FieldError> {
        let s = &self.settings;
        s.check()
            .map_err(|(k, m)| crate::error::FieldError::new(format!("{key}.llr.{k}"), m))?;
        if self.ends != [true, true] {
            return Ok(None);
        }
        let buffer = s
            .buffer
            .map_or_else(|| rate.bytes_in(BUFFER_TIME + delay + delay), |b| b.0)
            .max(crate::packet::MIN_FRAME as u64);
        Ok(Some(LlrConfig {
            buffer,
            frames: s
                .frames
                .unwrap_or_else(|| buffer.div_ceil(BYTES_PER_FRAME).min(MAX_FRAMES as u64) as u32),
            replay_timer: s.replay_timer.unwrap_or(REPLAY_TIMER),
            replay_count: s.replay_count.unwrap_or(REPLAY_COUNT),
            pcs_lost_timeout: s.pcs_lost_timeout.unwrap_or(Duration::ZERO),
            data_age_timeout: s.data_age_timeout.unwrap_or(Duration::ZERO),
            ctlos_spacing: s.ctlos_spacing.map_or(ACK_SPACING, |b| b.0 as u32),
            init_action: s.init_action.unwrap_or_default(),
            flush_action: s.flush_action.unwrap_or_default(),
            re_init_on_flush: s.re_init_on_flush.unwrap_or(true),
        }))
    }

    /// True when the ends disagree (a configuration finding).
    pub fn mismatched(&self) -> bool {
        self.ends[0] != self.ends[1]
    }

    /// What a configuration finding should say about this cable, if anything.
    pub fn note(&self) -> Option<LlrNote> {
        if self.mismatched() {
            return Some(LlrNote::Mismatched);
        }
        let s = &self.settings;
        (s.re_init_on_flush == Some(false)).then(|| LlrNote::StaysInFlush(s.flush_action.unwrap_or_default()))
    }
}

/// A cable's LLR setting that will not do what its user likely meant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LlrNote {
    /// LLR on at one end only.
    Mismatched,
    /// `re_init_on_flush = false`: a flushed sender stays in FLUSH, under this frame action.
    StaysInFlush(FrameAction),
}
