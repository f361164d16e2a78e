//! Plots of a comparison: goodput against RTT, one line per transport, one SVG per link rate
//! and loss rate.

use crate::compare::{RunResult, Transport};
use plotters::prelude::*;
use std::path::{Path, PathBuf};

/// Colours per transport, in [`Transport::ALL`] order.
const COLOURS: [RGBColor; 5] = [
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0xff, 0x7f, 0x0e),
];

fn colour(t: Transport) -> RGBColor {
    let index = Transport::ALL.iter().position(|x| *x == t).unwrap_or(0);
    COLOURS[index]
}

/// Writes `goodput-<rate>-loss<loss>.svg` into `dir` for each (rate, loss) of `results`;
/// returns the files written.
pub fn write_all(results: &[RunResult], dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut keys: Vec<(u64, f64)> = Vec::new();
    for r in results {
        if !keys.contains(&(r.rate_bps, r.loss)) {
            keys.push((r.rate_bps, r.loss));
        }
    }
    let mut files = Vec::new();
    for (rate, loss) in keys {
        let cell: Vec<&RunResult> = results
            .iter()
            .filter(|r| r.rate_bps == rate && r.loss == loss)
            .collect();
        let path = dir.join(format!(
            "goodput-{}mbit-loss{}.svg",
            rate / 1_000_000,
            format_percent(loss).trim_end_matches('%')
        ));
        plot(&cell, rate, loss, &path).map_err(|e| format!("{}: {e}", path.display()))?;
        files.push(path);
    }
    Ok(files)
}

/// A share as a percentage: `1%`, `0.5%`, `0%` (loss rates, reordered and duplicated shares).
pub fn format_percent(loss: f64) -> String {
    format!("{}%", (loss * 1000.0).round() / 10.0)
}

fn plot(
    results: &[&RunResult],
    rate: u64,
    loss: f64,
    path: &Path,
) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::new(path, (800, 500)).into_drawing_area();
    root.fill(&WHITE)?;
    let max_rtt = results.iter().map(|r| r.rtt_ms).fold(1.0, f64::max);
    let max_rate = rate as f64 / 1e6 * 1.05;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!(
                "Goodput vs RTT — {} Mbit/s link, {} random loss",
                rate / 1_000_000,
                format_percent(loss)
            ),
            ("sans-serif", 20),
        )
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..max_rtt * 1.05, 0.0..max_rate)?;
    chart
        .configure_mesh()
        .x_desc("RTT (ms)")
        .y_desc("goodput (Mbit/s)")
        .draw()?;
    for transport in Transport::ALL {
        let mut points: Vec<(f64, f64)> = results
            .iter()
            .filter(|r| r.transport == transport)
            .map(|r| (r.rtt_ms, r.goodput_bps / 1e6))
            .collect();
        if points.is_empty() {
            continue;
        }
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        let c = colour(transport);
        chart
            .draw_series(LineSeries::new(points.clone(), c.stroke_width(2)))?
            .label(transport.name())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2)));
        chart.draw_series(points.into_iter().map(|p| Circle::new(p, 4, c.filled())))?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()?;
    root.present()?;
    Ok(())
}
