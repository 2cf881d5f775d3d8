//! Numbers for CSV cells, formatted on the stack. The large files (`timeseries.csv`,
//! `events.csv`) have hundreds of thousands of rows; formatting each number through
//! `format!` allocated a `String` per cell and was a seventh of a 128-host incast's CPU time.
//! The text is exactly what `format!` writes (tests below compare them).

use sim_core::Time;

/// One formatted number: up to 20 digits of a `u64`, a point and three decimals.
pub struct Cell {
    buf: [u8; 24],
    len: u8,
}

impl Cell {
    /// `v` in decimal (`v.to_string()`).
    pub fn int(v: u64) -> Cell {
        let mut c = Cell { buf: [0; 24], len: 0 };
        c.push(itoa::Buffer::new().format(v).as_bytes());
        c
    }

    /// A time in nanoseconds with three decimals, exact from the integer picoseconds. It is
    /// what `format!("{:.3}", t.as_ns_f64())` wrote up to 2^42 ns (73 simulated minutes),
    /// while the float's error stays under half a picosecond; beyond, this is the exact one.
    pub fn ns(t: Time) -> Cell {
        let mut c = Cell::int(t.0 / 1000);
        let ps = (t.0 % 1000) as u16;
        c.push(&[
            b'.',
            b'0' + (ps / 100) as u8,
            b'0' + (ps / 10 % 10) as u8,
            b'0' + (ps % 10) as u8,
        ]);
        c
    }

    /// A fraction in 0..=1 with four decimals, rounded (`format!("{:.4}", u)` for the values
    /// a utilisation takes).
    pub fn fraction(u: f64) -> Cell {
        let t = (u.clamp(0.0, 1.0) * 10_000.0).round() as u16;
        let mut c = Cell::int((t / 10_000) as u64);
        let d = t % 10_000;
        c.push(&[
            b'.',
            b'0' + (d / 1000) as u8,
            b'0' + (d / 100 % 10) as u8,
            b'0' + (d / 10 % 10) as u8,
            b'0' + (d % 10) as u8,
        ]);
        c
    }

    fn push(&mut self, s: &[u8]) {
        let n = self.len as usize;
        self.buf[n..n + s.len()].copy_from_slice(s);
        self.len += s.len() as u8;
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len as usize]
    }
}

/// `s` as a CSV field, quoted where the `csv` crate would quote it, for rows written by hand
/// (numbers and fixed names need no quoting; user-given names may).
pub fn text(s: &str) -> Vec<u8> {
    // The bytes the crate quotes a field for (its defaults: `,` delimits, `"` quotes, a
    // line ends at `\n` and `\r`): without any, the text as it is, without a writer's
    // 8 KiB buffer made and cleared for it.
    if !s.bytes().any(|b| matches!(b, b',' | b'"' | b'\n' | b'\r')) {
        return s.as_bytes().to_vec();
    }
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([s]).expect("writing to memory");
    let mut v = w.into_inner().expect("writing to memory");
    v.pop(); // the record's terminator
    v
}

/// Write one CSV row of fields already formatted ([`Cell`], [`text`]).
#[inline]
pub fn row(out: &mut impl std::io::Write, fields: &[&[u8]]) -> std::io::Result<()> {
    for (i, f) in fields.iter().enumerate() {
        if i > 0 {
            out.write_all(b",")?;
        }
        out.write_all(f)?;
    }
    out.write_all(b"\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_read_as_format_writes_them() {
        for v in [0, 7, 10, 999, 1000, 123_456_789, u64::MAX] {
            assert_eq!(Cell::int(v).as_bytes(), v.to_string().as_bytes());
        }
        for ps in [
            0,
            1,
            9,
            10,
            999,
            1000,
            1001,
            5_699_520,
            21_667_000_123,
            3_000_000_000_000_123,
            (1 << 42) * 1000 - 1,
        ] {
            let t = Time(ps);
            let want = format!("{:.3}", t.as_ns_f64());
            assert_eq!(Cell::ns(t).as_bytes(), want.as_bytes(), "{ps} ps");
        }
        for u in [0.0f64, 1.0, 0.5, 0.12345, 0.99996, 1.0 / 3.0, 2.0, -1.0] {
            let t = (u.clamp(0.0, 1.0) * 10_000.0_f64).round() / 10_000.0;
            assert_eq!(Cell::fraction(u).as_bytes(), format!("{t:.4}").as_bytes(), "{u}");
        }
    }

    #[test]
    fn hand_written_rows_read_as_the_csv_crate_writes_them() {
        let names = [
            "plain",
            "with, comma",
            "with \"quote\"",
            "line\nbreak",
            "carriage\rreturn",
            "",
            "edge2-0 to-h33",
        ];
        let mut want = csv::Writer::from_writer(Vec::new());
        let mut got = Vec::new();
        for n in names {
            want.write_record([n, "1.500", n]).unwrap();
            row(&mut got, &[&text(n), b"1.500", &text(n)]).unwrap();
        }
        assert_eq!(
            String::from_utf8(got).unwrap(),
            String::from_utf8(want.into_inner().unwrap()).unwrap()
        );
    }
}
