//! The RoCEv2 reliable connection (RC) queue pair's state machine: go-back-N.
//!
//! As an RC QP implements it (IBA 1.4, sections 9.7.5 responder and 9.7.6 requester; NVIDIA
//! ConnectX): packets carry a PSN; the responder accepts only the expected PSN, acknowledges
//! cumulatively (coalesced every `ack_every` packets, and always the last), and on a gap sends
//! one NAK "PSN sequence error" carrying the PSN it expects, then discards out-of-order
//! packets silently until that PSN arrives. The requester rewinds to the NAKed PSN and resends
//! everything from there; a retransmission timer (`local_ack_timeout`, 4.096 us x 2^n,
//! IBA 9.7.6.1.3) recovers a lost tail or a lost NAK.

use crate::cc::dcqcn::NotificationPoint;

/// What the responder answers to a data packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Response {
    None,
    Ack(u32),
    Nak(u32),
}

#[derive(Debug, Clone, Default)]
pub struct RoceQp {
    // Requester.
    pub next_seq: u32,
    /// Highest PSN sent + 1 (anything below it sent again is a retransmission).
    pub max_sent: u32,
    /// Cumulative ACK: packets below it are acknowledged.
    pub acked: u32,
    /// Unacknowledged-bytes window (None: unlimited).
    pub window: Option<u64>,
    // Responder.
    pub expected: u32,
    since_ack: u32,
    nak_outstanding: bool,
    /// A CE mark arrived since the last ACK, to echo (when the congestion control asks for
    /// it: `echoes_ecn`).
    pub ece: bool,
    pub np: NotificationPoint,
}

impl RoceQp {
    /// Take the responder's side from `rx` (a run on several threads: its receiver's copy).
    pub fn take_receiver(&mut self, rx: &mut RoceQp) {
        self.expected = rx.expected;
        self.since_ack = rx.since_ack;
        self.nak_outstanding = rx.nak_outstanding;
        self.ece = rx.ece;
        self.np = std::mem::take(&mut rx.np);
    }

    pub fn new(window: Option<u64>) -> Self {
        RoceQp {
            window,
            ..Default::default()
        }
    }

    /// True when the requester may send a packet now (rate limiting aside).
    #[inline]
    pub fn can_send(&self, packets: u32, mtu: u32) -> bool {
        if self.next_seq >= packets {
            return false;
        }
        match self.window {
            None => true,
            Some(w) => (self.next_seq - self.acked) as u64 * (mtu as u64) < w,
        }
    }

    /// Take the next PSN to send; true when it is a retransmission.
    #[inline]
    pub fn take_psn(&mut self) -> (u32, bool) {
        let seq = self.next_seq;
        self.next_seq += 1;
        let retx = seq < self.max_sent;
        self.max_sent = self.max_sent.max(self.next_seq);
        (seq, retx)
    }

    /// The responder's handling of PSN `seq` (go-back-N); `accepted` when it is new data.
    #[inline]
    pub fn receive(&mut self, seq: u32, last: bool, packets: u32, ack_every: u32) -> (Response, bool) {
        if seq == self.expected {
            self.expected += 1;
            self.nak_outstanding = false;
            self.since_ack += 1;
            if self.since_ack >= ack_every || last || self.expected == packets {
                self.since_ack = 0;
                return (Response::Ack(self.expected), true);
            }
            (Response::None, true)
        } else if seq > self.expected {
            if self.nak_outstanding {
                return (Response::None, false);
            }
            self.nak_outstanding = true;
            (Response::Nak(self.expected), false)
        } else {
            // A duplicate (the requester rewound further than needed): re-acknowledge.
            (Response::Ack(self.expected), false)
        }
    }

    /// An ACK or NAK for `psn` reached the requester. Returns true when it made progress.
    #[inline]
    pub fn on_ack(&mut self, psn: u32, nak: bool) -> bool {
        let progress = psn > self.acked;
        if progress {
            self.acked = psn;
        }
        if nak && psn >= self.acked && psn < self.next_seq {
            self.next_seq = psn; // go back N
        }
        if self.next_seq < self.acked {
            self.next_seq = self.acked;
        }
        progress
    }

    /// The retransmission timer expired with data outstanding: rewind to the last ACK.
    pub fn rewind(&mut self) {
        self.next_seq = self.acked;
    }

    /// True while data is unacknowledged.
    pub fn outstanding(&self) -> bool {
        self.acked < self.next_seq
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn responder_acks_cumulatively_and_naks_a_gap_once() {
        let mut tx = RoceQp::new(None);
        let mut rx = RoceQp::new(None);
        let psns: Vec<u32> = (0..4).map(|_| tx.take_psn().0).collect();
        assert_eq!(psns, vec![0, 1, 2, 3]);
        assert_eq!(rx.receive(0, false, 4, 2), (Response::None, true), "coalesced");
        assert_eq!(
            rx.receive(2, false, 4, 2),
            (Response::Nak(1), false),
            "gap: NAK the expected PSN"
        );
        assert_eq!(
            rx.receive(3, true, 4, 2),
            (Response::None, false),
            "one NAK per gap"
        );
        // The requester goes back to PSN 1 and resends 1, 2, 3.
        assert!(tx.on_ack(1, true));
        assert_eq!(tx.next_seq, 1);
        let again: Vec<(u32, bool)> = (0..3).map(|_| tx.take_psn()).collect();
        assert!(again.iter().all(|&(_, retx)| retx));
        assert_eq!(rx.receive(1, false, 4, 2), (Response::Ack(2), true));
        assert_eq!(rx.receive(2, false, 4, 2), (Response::None, true));
        assert_eq!(
            rx.receive(3, true, 4, 2),
            (Response::Ack(4), true),
            "last is always acked"
        );
        assert_eq!(
            rx.receive(1, false, 4, 2),
            (Response::Ack(4), false),
            "duplicate re-acked"
        );
    }

    #[test]
    fn window_limits_unacknowledged_bytes() {
        let mut q = RoceQp::new(Some(3000));
        for _ in 0..3 {
            assert!(q.can_send(10, 1000));
            q.take_psn();
        }
        assert!(!q.can_send(10, 1000));
        q.on_ack(1, false);
        assert!(q.can_send(10, 1000));
    }

    #[test]
    fn timeout_rewinds_to_the_last_ack() {
        let mut q = RoceQp::new(None);
        for _ in 0..5 {
            q.take_psn();
        }
        q.on_ack(2, false);
        q.rewind();
        assert_eq!(q.next_seq, 2);
    }
}
