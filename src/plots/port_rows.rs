//! The rows of `link_utilisation.png`: a row per switch port when they fit; else the ports
//! grouped by switch (or runs of switches), a group's row their mean. A port that differs
//! from its group keeps a labelled row of its own, since the mean would hide it: a port whose
//! cable was down for a while, one paused while its peers were not, one much busier (or
//! idler) than they were; then, with room left, the most paused and the hottest.

use super::VariantData;
use super::chart::natural_order as natural;
use models::fault::{Action, FaultAction};
use models::topology::Topology;
use std::collections::HashMap;

/// Ports that keep a row of their own when there is room left: the most paused, the hottest.
const PAUSED_ROWS: usize = 4;
const HOT_ROWS: usize = 3;

/// One row of the heat map: its label, the sampled ports it averages, the times PFC paused
/// them and their cables were down, and whether it stands out (a port of its own among
/// groups).
pub(super) struct Row {
    pub label: String,
    pub members: Vec<usize>,
    pub paused: Vec<(f64, f64)>,
    pub down: Vec<(f64, f64)>,
    pub marked: bool,
}

/// What sets a port apart, each a share of the run: its mean utilisation, the time it was
/// paused, the time its cable was down.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct Traits {
    pub busy: f64,
    pub paused: f64,
    pub down: f64,
}

/// How far a port with `me` stands out from the rest of its group (`others`, their mean), as
/// a share of the run; 0 when it does not. Down for 1 % of the run more than they were comes
/// first (2 + that share). Then the larger of: paused for 5 % more and at least twice as
/// long; busier by 10 points of utilisation and 1.5 times (an uplink carrying two flows beside
/// uplinks carrying one); idler by 20 points and half or less, counted half as far (its
/// group's row still shows what its peers did, where the mean hides a busier port).
pub(super) fn standout(me: Traits, others: Traits) -> f64 {
    let down = me.down - others.down;
    if down >= 0.01 {
        return 2.0 + down;
    }
    let mut score: f64 = 0.0;
    let paused = me.paused - others.paused;
    if paused >= 0.05 && me.paused >= 2.0 * others.paused {
        score = paused;
    }
    let busier = me.busy - others.busy;
    if busier >= 0.1 && me.busy >= 1.5 * others.busy {
        score = score.max(busier);
    }
    let idler = others.busy - me.busy;
    if idler >= 0.2 && others.busy >= 2.0 * me.busy {
        score = score.max(idler / 2.0);
    }
    score
}

/// Of each group of two ports or more, the member that stands out most from the others'
/// mean ([`standout`]), with its score, most first.
pub(super) fn outliers(groups: &[Vec<usize>], traits: &[Traits]) -> Vec<(f64, usize)> {
    let mut out = Vec::new();
    for g in groups.iter().filter(|g| g.len() >= 2) {
        let sum = g.iter().fold(Traits::default(), |a, &i| Traits {
            busy: a.busy + traits[i].busy,
            paused: a.paused + traits[i].paused,
            down: a.down + traits[i].down,
        });
        let n = (g.len() - 1) as f64;
        let score = |i: usize| {
            let me = traits[i];
            let others = Traits {
                busy: (sum.busy - me.busy) / n,
                paused: (sum.paused - me.paused) / n,
                down: (sum.down - me.down) / n,
            };
            standout(me, others)
        };
        // The larger score; on a tie, the busier.
        let best = g
            .iter()
            .map(|&i| (score(i), traits[i].busy, i))
            .max_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)).then(b.2.cmp(&a.2)));
        if let Some((s, _, i)) = best.filter(|b| b.0 > 0.0) {
            out.push((s, i));
        }
    }
    out.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    out
}

/// Each sampled port's times down (ns), from the scenario's faults: a cut cable takes down the
/// port at each end, from the cut to the repair (or `end`), to the instant.
pub(super) fn down_at_sampled(
    d: &VariantData,
    faults: &[FaultAction],
    t: &Topology,
    end: f64,
) -> HashMap<usize, Vec<(f64, f64)>> {
    let s = &d.telemetry.sampler;
    let index: HashMap<&(String, String), usize> = (0..s.ports.len())
        .filter_map(|i| d.telemetry.labels.get(&s.ports[i].0).map(|l| (l, i)))
        .collect();
    let mut open: HashMap<(usize, usize), f64> = HashMap::new();
    let mut cables: HashMap<(usize, usize), Vec<(f64, f64)>> = HashMap::new();
    for f in faults {
        let (a, b) = (f.a.idx().min(f.b.idx()), f.a.idx().max(f.b.idx()));
        let at = f.at.as_ns_f64();
        match f.action {
            Action::Down => {
                open.entry((a, b)).or_insert(at);
            }
            Action::Up => {
                if let Some(from) = open.remove(&(a, b)) {
                    cables.entry((a, b)).or_default().push((from, at));
                }
            }
            _ => {}
        }
    }
    for (k, from) in open {
        cables.entry(k).or_default().push((from, end));
    }
    let mut out: HashMap<usize, Vec<(f64, f64)>> = HashMap::new();
    for ((a, b), bars) in cables {
        let bars: Vec<(f64, f64)> = bars
            .into_iter()
            .filter(|&(from, _)| from < end)
            .map(|(from, to)| (from, to.min(end)))
            .collect();
        for (x, y) in [(a, b), (b, a)] {
            // The first cable between the two (a fault takes that one).
            let key = (t.nodes[x].name.clone(), format!("to-{}", t.nodes[y].name));
            if let (Some(&i), false) = (index.get(&key), bars.is_empty()) {
                out.entry(i).or_default().extend(bars.iter().copied());
            }
        }
    }
    out
}

/// Sampled ports as the rows order them: (tier, node, port, sampled index).
type Ports = Vec<(usize, String, String, usize)>;

/// Rows of the heat map, ordered by tier (highest first), then switch, then port: a row per
/// port when `max` rows allow it; else the ports that differ from their group keep rows of
/// their own (labelled, at most half the rows), and the others are grouped by switch, then by
/// runs of switches, each group labelled with its switches and port count.
pub(super) fn rows(
    d: &VariantData,
    tier: &HashMap<String, usize>,
    max: usize,
    end: f64,
    down: &HashMap<usize, Vec<(f64, f64)>>,
) -> Vec<Row> {
    let s = &d.telemetry.sampler;
    let mut ports: Ports = (0..s.ports.len())
        .map(|i| {
            let (node, port) = d.telemetry.labels.get(&s.ports[i].0).cloned().unwrap_or_default();
            let t = tier.get(&node).copied().unwrap_or(0);
            (t, node, port, i)
        })
        .collect();
    ports.sort_by(|a, b| b.0.cmp(&a.0).then(natural(&a.1, &b.1)).then(natural(&a.2, &b.2)));
    let paused = super::pauses::paused_at_sampled(d, end);
    let span = |v: Option<&Vec<(f64, f64)>>| v.map_or(0.0, |v| v.iter().map(|b| b.1 - b.0).sum::<f64>());
    let samples = s.times.len().max(1) as f64;
    let traits: Vec<Traits> = (0..s.ports.len())
        .map(|i| Traits {
            busy: (0..s.times.len()).map(|k| s.utilisation(i, k)).sum::<f64>() / samples,
            paused: span(paused.get(&i)) / end.max(1.0),
            down: span(down.get(&i)) / end.max(1.0),
        })
        .collect();
    let own_label = |i: usize, node: &str, port: &str| {
        let mut label = format!("{node} {port}");
        for (what, share) in [("down", traits[i].down), ("paused", traits[i].paused)] {
            if share > 0.0 {
                label += &format!(", {what} {:.0} %", 100.0 * share);
            }
        }
        label
    };
    let row = |i: usize, label: String, marked: bool| Row {
        label,
        members: vec![i],
        paused: paused.get(&i).cloned().unwrap_or_default(),
        down: down.get(&i).cloned().unwrap_or_default(),
        marked,
    };
    if ports.len() <= max.max(1) {
        return ports
            .iter()
            .map(|(_, node, port, i)| {
                let marked = traits[*i].paused > 0.0 || traits[*i].down > 0.0;
                row(*i, own_label(*i, node, port), marked)
            })
            .collect();
    }
    // The ports that keep their own rows, at most half the rows (the rest for the groups):
    // those down, those that differ from their group, then the most paused and the hottest.
    let half = (max / 2).max(1);
    let mut own: Vec<usize> = ports
        .iter()
        .map(|p| p.3)
        .filter(|&i| traits[i].down > 0.0)
        .collect();
    own.sort_by(|&a, &b| traits[b].down.total_cmp(&traits[a].down));
    own.truncate(half);
    // Against groups made as if the own rows took their half (their number changes how
    // ports are grouped: those found against pairs of ports would not stand out of a switch).
    split_outliers(
        &ports,
        &traits,
        (max, half),
        Some(max.saturating_sub(half)),
        &mut own,
    );
    let mut by_pause: Vec<usize> = ports
        .iter()
        .map(|p| p.3)
        .filter(|&i| traits[i].paused > 0.0)
        .collect();
    by_pause.sort_by(|&a, &b| traits[b].paused.total_cmp(&traits[a].paused));
    let mut by_heat: Vec<usize> = ports
        .iter()
        .map(|p| p.3)
        .filter(|&i| traits[i].busy > 0.0)
        .collect();
    by_heat.sort_by(|&a, &b| traits[b].busy.total_cmp(&traits[a].busy));
    let extra = by_pause
        .into_iter()
        .take(PAUSED_ROWS)
        .chain(by_heat.into_iter().take(HOT_ROWS));
    for i in extra {
        if !own.contains(&i) && own.len() < half {
            own.push(i);
        }
    }
    // Then against the groups as drawn (finer with fewer own rows).
    split_outliers(&ports, &traits, (max, half), None, &mut own);
    // Own rows sit just before their switch's group (in the ports' order).
    let pos = |i: usize| ports.iter().position(|p| p.3 == i).unwrap_or(0);
    let mut out: Vec<(usize, Row)> = groups(&ports, &own, max.saturating_sub(own.len()))
        .into_iter()
        .map(|(label, members)| {
            let union = |m: &HashMap<usize, Vec<(f64, f64)>>| {
                let mut bars: Vec<(f64, f64)> = members
                    .iter()
                    .flat_map(|i| m.get(i).cloned().unwrap_or_default())
                    .collect();
                bars.sort_by(|a, b| a.0.total_cmp(&b.0));
                bars
            };
            let at = members.iter().map(|&i| pos(i)).min().unwrap_or(0);
            let (paused, down) = (union(&paused), union(down));
            let r = Row {
                label,
                members,
                paused,
                down,
                marked: false,
            };
            (at, r)
        })
        .collect();
    for &i in &own {
        let p = &ports[pos(i)];
        out.push((pos(i), row(i, own_label(i, &p.1, &p.2), true)));
    }
    out.sort_by_key(|r| r.0);
    out.into_iter().map(|r| r.1).collect()
}

/// Give rows of their own (up to `half` of the `max` rows in all) to the ports that stand out
/// from their group, most first, until none does; each round regroups the rest, into `room`
/// rows or (None) the rows the own ones leave.
fn split_outliers(
    ports: &Ports,
    traits: &[Traits],
    (max, half): (usize, usize),
    room: Option<usize>,
    own: &mut Vec<usize>,
) {
    for _ in 0..64 {
        if own.len() >= half {
            return;
        }
        let room = room.unwrap_or(max.saturating_sub(own.len()));
        let members: Vec<Vec<usize>> = groups(ports, own, room).into_iter().map(|g| g.1).collect();
        let found = outliers(&members, traits);
        if found.is_empty() {
            return;
        }
        for (_, i) in found.into_iter().take(half - own.len()) {
            own.push(i);
        }
    }
}

/// The ports not in `own`, grouped into about `room` rows (label, sampled indices): by
/// switch, and by runs of switches of a tier when there are too many switches; with few
/// switches, by runs of ports within each.
fn groups(ports: &Ports, own: &[usize], room: usize) -> Vec<(String, Vec<usize>)> {
    let mut switches: Vec<(usize, String, Vec<usize>)> = Vec::new();
    for (t, node, _, i) in ports.iter().filter(|p| !own.contains(&p.3)) {
        match switches.last_mut() {
            Some(last) if last.1 == *node => last.2.push(*i),
            _ => switches.push((*t, node.clone(), vec![*i])),
        }
    }
    let room = room.max(1);
    let per = switches.len().div_ceil(room).max(1);
    let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
    let others: usize = switches.iter().map(|sw| sw.2.len()).sum();
    if switches.len() * 2 <= room {
        // Few switches: runs of ports within each, as many rows as there is room for.
        let per_port = others.div_ceil(room).max(1);
        let name = |i: usize| {
            ports
                .iter()
                .find(|p| p.3 == i)
                .map_or(String::new(), |p| p.2.clone())
        };
        for (_, node, members) in &switches {
            for c in members.chunks(per_port) {
                let label = match c {
                    [one] => format!("{node} {}", name(*one)),
                    _ => format!("{node} {}..{} ({})", name(c[0]), name(c[c.len() - 1]), c.len()),
                };
                groups.push((label, c.to_vec()));
            }
        }
        return groups;
    }
    for run in switches.chunk_by(|a, b| a.0 == b.0) {
        for c in run.chunks(per) {
            let members: Vec<usize> = c.iter().flat_map(|sw| sw.2.iter().copied()).collect();
            let names = if c.len() == 1 {
                c[0].1.clone()
            } else {
                format!("{}..{}", c[0].1, c[c.len() - 1].1)
            };
            let what = crate::console::count(members.len() as u64, "port", "ports");
            // A switch with a port on a row of its own: these are its other ports.
            let split = own
                .iter()
                .any(|&i| ports.iter().any(|p| p.3 == i && c.iter().any(|sw| sw.1 == p.1)));
            let label = if split {
                format!("{names}, {what} more")
            } else {
                format!("{names}, {what}")
            };
            groups.push((label, members));
        }
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    fn busy(b: f64) -> Traits {
        Traits {
            busy: b,
            ..Traits::default()
        }
    }

    fn ports(n: usize) -> Ports {
        // Two switches of one tier, n ports each.
        (0..2 * n)
            .map(|i| (1, format!("sw{}", i / n), format!("p{}", i % n), i))
            .collect()
    }

    #[test]
    fn an_uplink_carrying_twice_its_peers_keeps_its_own_row() {
        // fat-tree-k4's core3: one port at 100 %, the others near 30 %: the group's mean
        // (about 45 %) would hide it.
        let mut traits = vec![busy(0.3); 8];
        traits[5] = busy(1.0);
        let found = outliers(&[vec![4, 5, 6, 7]], &traits);
        assert_eq!(found.iter().map(|f| f.1).collect::<Vec<_>>(), [5]);
        let mut own = Vec::new();
        split_outliers(&ports(4), &traits, (4, 2), None, &mut own);
        assert_eq!(own, [5]);
        let g = groups(&ports(4), &own, 3);
        assert_eq!(g[1], ("sw1, 3 ports more".to_string(), vec![4, 6, 7]));
        // Peers alike: nobody stands out.
        assert!(outliers(&[vec![0, 1, 2, 3]], &[busy(0.5); 8]).is_empty());
    }

    #[test]
    fn a_port_down_or_paused_while_its_peers_were_not_stands_out() {
        let mut traits = vec![busy(0.5); 4];
        traits[2].down = 0.6;
        traits[3].paused = 0.2;
        let found = outliers(&[vec![0, 1, 2], vec![1, 3]], &traits);
        assert_eq!(found.iter().map(|f| f.1).collect::<Vec<_>>(), [2, 3]);
        // Paused like its peers: not apart.
        let all = Traits {
            busy: 0.5,
            paused: 0.2,
            down: 0.0,
        };
        assert_eq!(standout(all, all), 0.0);
    }
}
