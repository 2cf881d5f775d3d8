//! Bit errors on a cable and the Reed-Solomon FEC that corrects them (IEEE 802.3).
//!
//! The codes, on 10-bit symbols, each codeword carrying 514 symbols of data (5,140 bits: 20
//! blocks of 257 bits, each block four 64b/66b blocks transcoded, so 5,120 bits of the MAC's
//! stream) and 14 or 30 parity symbols:
//! - RS(528,514), "KR4" FEC: 100GBASE-CR4/KR4/SR4 (802.3 clause 91) and 25GBASE-R (clause
//!   108); it corrects t = 7 wrong symbols per codeword.
//! - RS(544,514), "KP4" FEC: 50GBASE-R (clause 134), 100G over PAM4 lanes (clause 91),
//!   200GBASE-R and 400GBASE-R (clause 119, two codewords interleaved symbol by symbol); t = 15.
//!
//! With independent bit errors at rate b before FEC, a symbol is wrong with p = 1-(1-b)^10, a
//! codeword fails when more than t of its n symbols are wrong (the binomial tail), and a frame
//! is lost (its FCS fails) when any codeword it overlaps fails. A frame of L bits starting at a
//! uniformly random point of the stream overlaps floor(L/C)+1 codewords, or one more with
//! probability frac(L/C) (C = 5,120 MAC bits). Without FEC the frame is lost with 1-(1-b)^L.
//! Independent bit errors are the assumption of 802.3's own FEC analyses; real receivers'
//! decision-feedback equalisers make bursts, which the interleaving at 200G and up is for (not
//! modelled: docs/not-modelled.md).
//!
//! Latency: a decoder cannot release a codeword's data before the whole codeword (both
//! interleaved codewords, at 200G and up) has arrived, and that is the lower bound of Sella,
//! Moore and Zilberman ("FEC Killed the Cut-Through Switch", NetAI/NEAT 2018): 5,120 MAC bits
//! at the line rate, 51.2 ns at 100G, 204.8 ns at 25G, 25.6 ns at 400G. Decoding itself adds
//! an implementation's own pipeline on top, which a cable's `fec_latency` sets when known.

use serde::Deserialize;
use sim_core::{BitRate, Duration};

/// An FEC mode as a port is configured (SONiC's `PORT.fec`: "none", "rs"; "rs" is the code
/// the port's speed uses).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Fec {
    #[default]
    None,
    /// RS(528,514), t = 7.
    #[serde(rename = "rs-528")]
    Rs528,
    /// RS(544,514), t = 15.
    #[serde(rename = "rs-544")]
    Rs544,
}

/// MAC bits a codeword carries (20 x 256: the 257b/256b transcoding's payload).
pub const CODEWORD_MAC_BITS: f64 = 5120.0;

impl Fec {
    /// (n, t): symbols per codeword, symbols it corrects.
    pub fn code(self) -> Option<(u32, u32)> {
        match self {
            Fec::None => None,
            Fec::Rs528 => Some((528, 7)),
            Fec::Rs544 => Some((544, 15)),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Fec::None => "none",
            Fec::Rs528 => "rs-528",
            Fec::Rs544 => "rs-544",
        }
    }

    /// The probability that one codeword fails (more than t wrong symbols) at pre-FEC bit
    /// error rate `ber`: the binomial tail, summed from its largest terms in log space.
    pub fn codeword_failure(self, ber: f64) -> f64 {
        let Some((n, t)) = self.code() else {
            return 0.0;
        };
        if ber <= 0.0 {
            return 0.0;
        }
        let p = -(10.0 * (-ber).ln_1p()).exp_m1(); // 1 - (1-b)^10
        let (ln_p, ln_q) = (p.ln(), (-p).ln_1p());
        // ln C(n, i) by the running product; terms fall fast past the mean n p.
        let mut ln_choose = 0.0;
        let mut sum = 0.0;
        for i in 1..=n {
            ln_choose += ((n - i + 1) as f64).ln() - (i as f64).ln();
            if i > t {
                let term = (ln_choose + i as f64 * ln_p + (n - i) as f64 * ln_q).exp();
                sum += term;
                if term < sum * 1e-17 && (i as f64) > n as f64 * p {
                    break;
                }
            }
        }
        sum.min(1.0)
    }

    /// Codewords the decoder must hold before it releases data: two at 200G and up, where
    /// clause 119 interleaves them.
    fn held_codewords(self, rate: BitRate) -> f64 {
        match self {
            Fec::None => 0.0,
            _ if rate.as_gbps() >= 200.0 => 2.0,
            _ => 1.0,
        }
    }

    /// The decoder's least latency per hop at `rate` (see the module docs).
    pub fn latency(self, rate: BitRate) -> Duration {
        let bits = self.held_codewords(rate) * CODEWORD_MAC_BITS;
        Duration((bits / rate.as_gbps() * 1e3).round() as u64)
    }
}

/// The bit errors of one cable direction, as the frames see them.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BitErrors {
    /// Bit error rate before FEC (0: none).
    pub pre_fec_ber: f64,
    pub fec: Fec,
    /// ln(1 - P(codeword fails)), cached.
    ln_codeword_ok: f64,
}

impl BitErrors {
    pub fn new(pre_fec_ber: f64, fec: Fec) -> BitErrors {
        BitErrors {
            pre_fec_ber,
            fec,
            ln_codeword_ok: (-fec.codeword_failure(pre_fec_ber)).ln_1p(),
        }
    }

    /// Probability that a frame of `bytes` arrives corrupted.
    pub fn frame_loss(&self, bytes: u32) -> f64 {
        if self.pre_fec_ber <= 0.0 {
            return 0.0;
        }
        let bits = bytes as f64 * 8.0;
        if self.fec == Fec::None {
            return -(bits * (-self.pre_fec_ber).ln_1p()).exp_m1();
        }
        let x = bits / CODEWORD_MAC_BITS;
        let (whole, frac) = (x.floor(), x.fract());
        // 1 - (1-P)^m, exact for the tiny P a working code leaves.
        let lost = |m: f64| -(m * self.ln_codeword_ok).exp_m1();
        (1.0 - frac) * lost(whole + 1.0) + frac * lost(whole + 2.0)
    }
}

/// A receiving port's RS-FEC counters over a run, as IEEE 802.3 clause 91.6 keeps them
/// (corrected codewords, uncorrected codewords, symbol errors) and SAI names them
/// (`SAI_PORT_STAT_IF_IN_FEC_CORRECTABLE_FRAMES`, `..._NOT_CORRECTABLE_FRAMES`,
/// `..._SYMBOL_ERRORS`: SONiC's FEC "frame" is the codeword; `show interfaces counters
/// fec-stats` prints them as FEC_CORR, FEC_UNCORR, FEC_SYMBOL_ERR).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FecCounters {
    pub corrected: u64,
    pub uncorrectable: u64,
    pub symbol_errors: u64,
}

impl BitErrors {
    /// Per codeword: the probability that it had wrong symbols and corrected them all, that
    /// it failed, and the mean number of wrong symbols in a corrected one.
    pub fn codeword_odds(&self) -> (f64, f64, f64) {
        let Some((n, t)) = self.fec.code() else {
            return (0.0, 0.0, 0.0);
        };
        let b = self.pre_fec_ber;
        if b <= 0.0 {
            return (0.0, 0.0, 0.0);
        }
        let p = -(10.0 * (-b).ln_1p()).exp_m1();
        let (ln_p, ln_q) = (p.ln(), (-p).ln_1p());
        let (mut ln_choose, mut corrected, mut symbols) = (0.0, 0.0, 0.0);
        for k in 1..=t {
            ln_choose += ((n - k + 1) as f64).ln() - (k as f64).ln();
            let term = (ln_choose + k as f64 * ln_p + (n - k) as f64 * ln_q).exp();
            corrected += term;
            symbols += k as f64 * term;
        }
        let mean = if corrected > 0.0 { symbols / corrected } else { 0.0 };
        (corrected, self.fec.codeword_failure(b), mean)
    }

    /// The counters of a receiver that took `codewords` codewords while its cable was up,
    /// `under_frames` of them carrying frames, `lost_frames` frames lost to a failed codeword
    /// (drawn with the frames): each of those is one uncorrected codeword, the codewords
    /// between frames fail and the rest are corrected as the code's odds say (drawn from
    /// `rng`), and each corrected one had the mean number of wrong symbols of a corrected
    /// codeword.
    pub fn counters(
        &self,
        codewords: u64,
        under_frames: u64,
        lost_frames: u64,
        rng: &mut sim_core::SimRng,
    ) -> FecCounters {
        use rand::RngExt;
        let (corrected, failed, mean) = self.codeword_odds();
        let mut draw = |n: u64, p: f64| match rand_distr::Binomial::new(n, p.clamp(0.0, 1.0)) {
            Ok(d) => rng.sample(d),
            Err(_) => 0,
        };
        let uncorrectable = lost_frames + draw(codewords.saturating_sub(under_frames), failed);
        let rest = codewords.saturating_sub(uncorrectable);
        let corrected = draw(rest, corrected / (1.0 - failed).max(f64::MIN_POSITIVE));
        FecCounters {
            corrected,
            uncorrectable,
            symbol_errors: (corrected as f64 * mean).round() as u64,
        }
    }
}

/// A cable's `fec`: one mode for both ends, or each end's own (`[a's, b's]`; a host's end
/// first on the built-in shapes' host cables).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum FecEnds {
    Both(Fec),
    Each([Fec; 2]),
}

impl FecEnds {
    /// The mode both ends run, or None when they differ (the link never comes up: a receiver
    /// cannot find the other end's codeword markers, 802.3 clause 91.5.3.1 alignment lock).
    pub fn agreed(self) -> Option<Fec> {
        match self {
            FecEnds::Both(f) => Some(f),
            FecEnds::Each([a, b]) => (a == b).then_some(a),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_decoder_holds_one_codeword_below_200g_and_two_above() {
        assert_eq!(Fec::Rs528.latency(BitRate::gbps(100)), Duration(51_200));
        assert_eq!(Fec::Rs528.latency(BitRate::gbps(25)), Duration(204_800));
        assert_eq!(Fec::Rs544.latency(BitRate::gbps(400)), Duration(25_600));
        assert_eq!(Fec::None.latency(BitRate::gbps(100)), Duration::ZERO);
    }

    #[test]
    fn a_codeword_fails_past_t_symbols_by_the_binomial_tail() {
        // Few errors: the tail is its first term, C(n, t+1) p^(t+1).
        let b: f64 = 1e-6;
        let p = 1.0 - (1.0 - b).powi(10);
        let c8: f64 = (0..8).map(|i| (528 - i) as f64 / (i + 1) as f64).product();
        let first = c8 * p.powi(8) * (1.0 - p).powi(520);
        let got = Fec::Rs528.codeword_failure(b);
        assert!((got / first - 1.0).abs() < 1e-3, "{got} against {first}");
        // Many: n p = 5.3 wrong symbols on average is within t = 7 most of the time, not
        // within t = 15 rarely.
        assert!(Fec::Rs528.codeword_failure(1e-3) > 0.1);
        assert!(Fec::Rs544.codeword_failure(1e-3) < Fec::Rs528.codeword_failure(1e-3) / 50.0);
        assert_eq!(Fec::None.codeword_failure(1e-3), 0.0);
    }

    #[test]
    fn frame_loss_matches_a_stream_of_codewords_drawn_symbol_by_symbol() {
        // An independent computation: codewords whose failures come from counting wrong
        // symbols bit by bit, frames laid at random offsets over them, a frame lost when a
        // codeword it overlaps failed.
        use rand::{RngExt, SeedableRng, rngs::Xoshiro256PlusPlus};
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        for (fec, ber) in [(Fec::Rs528, 6e-4), (Fec::Rs544, 9e-4)] {
            let (n, t) = fec.code().unwrap();
            let codewords = 40_000;
            let failed: Vec<bool> = (0..codewords)
                .map(|_| {
                    let wrong = (0..n).filter(|_| (0..10).any(|_| rng.random_bool(ber))).count();
                    wrong > t as usize
                })
                .collect();
            let p_cw = failed.iter().filter(|&&f| f).count() as f64 / codewords as f64;
            let want = fec.codeword_failure(ber);
            let sd = (want * (1.0 - want) / codewords as f64).sqrt();
            assert!(
                (p_cw - want).abs() < 4.0 * sd,
                "{fec:?}: codewords {p_cw} against {want}"
            );
            for bytes in [64u32, 1082, 4178, 9000] {
                let bits = bytes as f64 * 8.0;
                let frames = 100_000;
                let lost = (0..frames)
                    .filter(|_| {
                        let start = rng.random_range(0.0..(codewords - 20) as f64) * CODEWORD_MAC_BITS;
                        let (first, last) = (
                            (start / CODEWORD_MAC_BITS) as usize,
                            ((start + bits) / CODEWORD_MAC_BITS) as usize,
                        );
                        failed[first..=last].iter().any(|&f| f)
                    })
                    .count() as f64
                    / frames as f64;
                let e = BitErrors::new(ber, fec);
                // The stream's own codeword failure rate, so that the check is of the overlap.
                let want = BitErrors {
                    ln_codeword_ok: (-p_cw).ln_1p(),
                    ..e
                }
                .frame_loss(bytes);
                let sd = (want * (1.0 - want) / frames as f64).sqrt();
                assert!(
                    (lost - want).abs() < 4.0 * sd + 1e-4,
                    "{fec:?} {bytes} B: {lost} lost against {want}"
                );
            }
        }
        // Without FEC: 1-(1-b)^L.
        let e = BitErrors::new(1e-6, Fec::None);
        assert!((e.frame_loss(1000) - (1.0 - (1.0f64 - 1e-6).powi(8000))).abs() < 1e-12);
    }

    #[test]
    fn mismatched_ends_never_agree() {
        assert_eq!(FecEnds::Both(Fec::Rs544).agreed(), Some(Fec::Rs544));
        assert_eq!(FecEnds::Each([Fec::Rs528, Fec::Rs528]).agreed(), Some(Fec::Rs528));
        assert_eq!(FecEnds::Each([Fec::Rs528, Fec::None]).agreed(), None);
    }
}
