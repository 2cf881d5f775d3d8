//! Unit tests of the workload generators and explicit flows.

mod explicit {
    use super::super::*;
    use sim_core::RngStreams;
    use std::path::Path;

    fn star(n: u32) -> Topology {
        Topology::test_star(n)
    }

    #[test]
    fn permutation_is_a_derangement_and_seeded() {
        let t = star(16);
        let w = WorkloadConfig::Permutation {
            size: Bytes(1000),
            start: Duration::ZERO,
            prio: 3,
        };
        let a = w.generate(0, &t, &RngStreams::new(1), Path::new(".")).unwrap();
        assert_eq!(a.len(), 16);
        assert!(a.iter().all(|f| f.src != f.dst));
        let mut dsts: Vec<u32> = a.iter().map(|f| f.dst.0).collect();
        dsts.sort();
        assert_eq!(
            dsts,
            (0..16).collect::<Vec<_>>(),
            "every host receives exactly once"
        );
        assert_eq!(a, w.generate(0, &t, &RngStreams::new(1), Path::new(".")).unwrap());
        assert_ne!(a, w.generate(0, &t, &RngStreams::new(2), Path::new(".")).unwrap());
    }

    #[test]
    fn poisson_offers_the_target_load() {
        let t = star(2);
        let size = Bytes(10_000);
        let duration = Duration::from_us(100_000);
        let w = WorkloadConfig::Poisson {
            load: 0.5,
            size: Some(size),
            cdf: None,
            duration,
            start: Duration::ZERO,
            sources: Some(vec![HostRef::Index(0)]),
            dst: Some(HostRef::Index(1)),
            prio: 3,
        };
        let flows = w.generate(0, &t, &RngStreams::new(9), Path::new(".")).unwrap();
        // Expected count = load * rate * duration / (size * 8) = 0.5 * 100e9 * 0.1 / 80000 = 62500.
        let expected = 0.5 * 100e9 * duration.as_secs_f64() / (size.0 as f64 * 8.0);
        let got = flows.len() as f64;
        assert!(
            (got - expected).abs() / expected < 0.02,
            "got {got}, expected {expected}"
        );
    }

    #[test]
    fn unknown_and_self_hosts_are_rejected_with_their_key() {
        let t = star(4);
        let f = |src: u64, dst: &str| FlowConfig {
            src: HostRef::Index(src),
            dst: HostRef::Name(dst.into()),
            size: Bytes(1),
            start: Duration::ZERO,
            prio: 3,
            victim: false,
        };
        let e = explicit_flows(&[f(0, "h1"), f(1, "h9")], &t).unwrap_err();
        assert_eq!(e.path, "flow[1].dst");
        assert!(e.message.contains("h0..h3"), "{}", e.message);
        assert!(
            explicit_flows(&[f(2, "h2")], &t)
                .unwrap_err()
                .message
                .contains("itself")
        );
    }
}

mod generators {
    use super::super::*;
    use sim_core::RngStreams;
    use std::path::Path;

    fn star(n: u32) -> Topology {
        Topology::test_star(n)
    }

    fn websearch(load: f64, duration_us: u64) -> (WorkloadConfig, Duration) {
        let d = Duration::from_us(duration_us);
        let w = WorkloadConfig::Poisson {
            load,
            size: None,
            cdf: Some(cdf::CdfConfig::Named("websearch".into())),
            duration: d,
            start: Duration::ZERO,
            sources: None,
            dst: None,
            prio: 3,
        };
        (w, d)
    }

    #[test]
    fn poisson_websearch_offers_the_target_load_within_two_percent() {
        let hosts = 16u32;
        for load in [0.3, 0.5, 0.7] {
            let (w, d) = websearch(load, 200_000);
            let flows = w
                .generate(0, &star(hosts), &RngStreams::new(4), Path::new("."))
                .unwrap();
            let offered = flows.iter().map(|f| f.size as f64 * 8.0).sum::<f64>()
                / (d.as_secs_f64() * 100e9 * hosts as f64);
            assert!(
                (offered - load).abs() / load < 0.02,
                "load {load}: offered {offered}"
            );
        }
    }

    #[test]
    fn poisson_inter_arrivals_have_a_coefficient_of_variation_of_one() {
        let (w, _) = websearch(0.5, 3_000_000);
        let flows = w
            .generate(0, &star(2), &RngStreams::new(8), Path::new("."))
            .unwrap();
        let mut t: Vec<f64> = flows
            .iter()
            .filter(|f| f.src == HostId(0))
            .map(|f| f.start.0 as f64)
            .collect();
        t.sort_by(f64::total_cmp);
        let gaps: Vec<f64> = t.windows(2).map(|w| w[1] - w[0]).collect();
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64;
        let cv = var.sqrt() / mean;
        assert!(
            gaps.len() > 10_000 && (cv - 1.0).abs() < 0.03,
            "CV {cv} over {} gaps",
            gaps.len()
        );
    }

    #[test]
    fn periodic_incast_repeats() {
        let w = WorkloadConfig::Incast {
            receiver: HostRef::Index(0),
            senders: Some(3),
            size: Bytes(1000),
            start: Duration::from_us(1),
            period: Some(Duration::from_us(10)),
            repeat: 4,
            prio: 3,
        };
        let f = w
            .generate(0, &star(8), &RngStreams::new(1), Path::new("."))
            .unwrap();
        assert_eq!(f.len(), 12);
        assert_eq!(f[11].start, Time(31_000_000));
    }
}
