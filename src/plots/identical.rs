//! Flows whose lines are identical in a `flow_rates.png` panel: drawn exactly over each
//! other, so the panel's legend names them (its other flows are named by the key only).

use super::chart::Series;

/// Flows whose lines are identical are drawn exactly over each other: the panel's legend
/// names them ("flow 0", "flow 2 (same as flow 0)"), so the hidden ones are not taken for
/// missing. The other flows have no legend entry (the key names them).
pub(super) fn name_identical(series: &mut [Series], flows: &[u32]) {
    let names: Vec<String> = flows.iter().map(|f| format!("flow {f}")).collect();
    for (s, name) in series.iter_mut().zip(&names) {
        s.label = name.clone();
    }
    super::time::note_identical(series);
    let under: Vec<String> = series
        .iter()
        .zip(&names)
        .filter(|(s, name)| s.label != **name)
        .map(|(s, _)| s.label.clone())
        .collect();
    for (s, name) in series.iter_mut().zip(&names) {
        let over = under.iter().any(|l| l.ends_with(&format!("(same as {name})")));
        if s.label == *name && !over {
            s.label.clear();
        }
    }
}

/// [`name_identical`]'s names in short: one legend entry per line that several flows draw
/// alike, on the one drawn last (the one seen), naming them all ("106 = 6").
pub(super) fn compact_identical(series: &mut [Series], flows: &[u32]) {
    let n = series.len().min(flows.len());
    let first: Vec<Option<usize>> = (0..n)
        .map(|j| (0..j).find(|&i| !series[j].points.is_empty() && series[i].points == series[j].points))
        .collect();
    for s in series.iter_mut() {
        s.label.clear();
    }
    for root in (0..n).filter(|&i| first[i].is_none()) {
        let same: Vec<usize> = (root..n)
            .filter(|&j| j == root || first[j] == Some(root))
            .collect();
        if same.len() > 1 {
            let ids: Vec<String> = same.iter().map(|&j| flows[j].to_string()).collect();
            series[same[same.len() - 1]].label = ids.join(" = ");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flows_with_identical_lines_are_named_in_the_panel() {
        let line = |v: f64| Series {
            points: vec![(0.0, v), (1.0, v)],
            ..Series::default()
        };
        let mut s = vec![line(1.0), line(1.0), line(2.0), line(1.0)];
        name_identical(&mut s, &[0, 1, 2, 3]);
        let labels: Vec<&str> = s.iter().map(|x| x.label.as_str()).collect();
        assert_eq!(
            labels,
            ["flow 0", "flow 1 (same as flow 0)", "", "flow 3 (same as flow 0)"]
        );
    }

    #[test]
    fn a_narrow_panel_names_identical_flows_in_one_short_entry() {
        let line = |v: f64| Series {
            points: vec![(0.0, v), (1.0, v)],
            ..Series::default()
        };
        let mut s = vec![line(1.0), line(2.0), line(1.0), line(1.0)];
        compact_identical(&mut s, &[106, 5, 6, 7]);
        let labels: Vec<&str> = s.iter().map(|x| x.label.as_str()).collect();
        assert_eq!(labels, ["", "", "", "106 = 6 = 7"]);
    }
}
