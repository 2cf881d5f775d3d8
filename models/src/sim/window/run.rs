//! Window order's side of the run: keys for the queue, going over to window order and back,
//! a part's log rows and storms in event order, and the nodes set aside until a part ends.

use super::super::{Event, Sim};
use super::{Idle, PART_BITS, Windows};
use sim_core::Time;
use sim_core::queue::Simultaneous;

impl Sim<'_> {
    /// The queue's key of `ev` at `at`: its time, or its place in window order.
    #[inline(always)]
    pub(in crate::sim) fn key(&self, at: Time, ev: Event) -> Time {
        match self.win.as_deref() {
            None => at,
            Some(w) => {
                let node = match ev {
                    Event::Arrive(p) => Some(w.far[p.idx()]),
                    Event::TxDone(p) => Some(self.net.port_node[p.idx()].0),
                    ev => self.site(ev).map(|n| n.0),
                };
                w.key(at, node)
            }
        }
    }

    /// Go over to window order when the run allows it ([`Windows::new`]): the pending events
    /// get their keys.
    pub(in crate::sim) fn enter_windows(&mut self) {
        if !self.window_order || self.win.is_some() {
            return;
        }
        let Some(w) = Windows::new(self) else {
            return;
        };
        let mut pending = Vec::with_capacity(self.queue.len());
        while let Some(e) = self.queue.pop() {
            pending.push(e);
        }
        self.queue = sim_core::EventQueue::new();
        self.win = Some(w);
        self.windowed = true;
        for (t, ev) in pending {
            let k = self.key(t, ev);
            self.queue.push(k, ev);
        }
    }

    /// Back to time order at the end of the run (or of its partitions): the log's last rows,
    /// the end time, the pending events' times.
    pub(in crate::sim) fn leave_windows(&mut self) {
        self.flush_window();
        if let Some(w) = self.win.take() {
            self.now = self.now.max(w.latest);
            if let Some(part) = self.part.as_deref_mut()
                && let Some((k, ev)) = part.held
            {
                part.held = Some((w.time(k), ev));
            }
            let mut pending = Vec::with_capacity(self.queue.len());
            while let Some((k, ev)) = self.queue.pop() {
                pending.push((w.time(k), ev));
            }
            self.queue = sim_core::EventQueue::new();
            for (t, ev) in pending {
                self.queue.push(t, ev);
            }
        }
    }

    /// A window has ended: its log rows in the order of the events that wrote them.
    pub(in crate::sim) fn flush_window(&mut self) {
        let Some(w) = self.win.as_deref_mut() else {
            return;
        };
        w.held.clear();
        if let Some(t) = w.first_xoff.take() {
            // As time order does at the part's first XOFF (`Sim::watch_xoff`).
            let at = t + super::super::pfc_watch::check_interval(&self.variant.pfc);
            self.schedule(at, Event::DeadlockCheck);
        }
        let w = self.win.as_deref_mut().expect("in windows");
        if !w.storms.is_empty() {
            let mut storms = std::mem::take(&mut w.storms);
            storms.sort_by_key(|&((t, ev), ..)| (t, ev.rank()));
            for ((t, ev), port, held) in storms.drain(..) {
                self.list_storm(port, held, (t, ev.rank()));
            }
            self.win.as_deref_mut().expect("in windows").storms = storms;
        }
        let w = self.win.as_deref_mut().expect("in windows");
        if w.rows.is_empty() {
            return;
        }
        let mut rows = std::mem::take(&mut w.rows);
        rows.sort_by_key(|&((t, ev), _)| (t, ev.rank()));
        for ((t, ev), row) in rows.drain(..) {
            self.log.push(row);
            if let Some(part) = self.part.as_deref_mut() {
                part.log_keys.push((t, ev.rank()));
            }
        }
        self.win.as_deref_mut().expect("in windows").rows = rows;
    }

    /// The time of the event `ev` of key `k`, starting its part if it is the first of it;
    /// None for an event past the time limit in the limit's part (every event up to the
    /// limit runs first: they may come after it), and for one keyed before a look cut its
    /// window (it goes to its part).
    #[inline]
    pub(in crate::sim) fn windowed_time(&mut self, k: Time, ev: Event, max_time: Time) -> Option<Time> {
        let w = self.win.as_deref().expect("in windows");
        let (t, h) = (w.time(k), w.window(k));
        if let Some(moved) = w.moved_by_look(k, t) {
            self.queue.push(moved, ev);
            return None;
        }
        if t > max_time && h == w.part(max_time.0) {
            return None;
        }
        if h != w.current {
            self.next_window(h);
        }
        Some(t)
    }

    /// Whether the idle timer `ev` (key `k`, at `t`) runs on one thread in window order,
    /// `done` when every flow has finished in the order handled; a node that cannot tell yet
    /// is held.
    #[inline]
    pub(in crate::sim) fn runs_idle(&mut self, k: Time, t: Time, ev: Event, done: bool) -> bool {
        match self.win.as_deref().expect("in windows").idle(k, t, ev, done) {
            Idle::Run => true,
            Idle::Skip => false,
            Idle::Hold => {
                self.hold(k, ev);
                false
            }
        }
    }

    /// Start window `w`.
    #[inline]
    pub(in crate::sim) fn next_window(&mut self, w: u64) {
        self.flush_window();
        let win = self.win.as_deref_mut().expect("in windows");
        win.set_current(w);
        let b = w >> PART_BITS;
        if b > win.next_sampled.0 {
            win.next_sampled = win.sampled_from(b);
        }
        win.looks.retain(|l| l.0 >= b);
    }

    /// Set aside the events of the current window of the node of key `k`, `ev` among them:
    /// they run after every other node's, when it is known whether every flow has finished.
    pub(in crate::sim) fn hold(&mut self, k: Time, ev: Event) {
        let w = self.win.as_deref_mut().expect("in windows");
        let prefix = k.0 >> w.bits;
        let node = w.slot(k);
        w.held.push(node as u32);
        let (held, shift, node_bits) = (w.held_slot, w.bits, w.node_bits);
        let rekey = |k: Time| {
            let base = (k.0 >> (node_bits + shift)) << (node_bits + shift);
            Time(base | (held << shift) | (k.0 & ((1 << shift) - 1)))
        };
        let mut moved = std::mem::take(&mut w.moved);
        moved.push((rekey(k), ev));
        while let Some(next) = self.queue.peek_time()
            && next.0 >> shift == prefix
        {
            let (k, e) = self.queue.pop().expect("peeked");
            moved.push((rekey(k), e));
        }
        for (k, e) in moved.drain(..) {
            self.queue.push(k, e);
        }
        self.win.as_deref_mut().expect("in windows").moved = moved;
    }
}
