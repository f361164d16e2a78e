//! `haul lab compare`: the transport shoot-out over a grid of emulated links.

use super::link::parse_queue;
use crate::units;
use anyhow::{bail, Context, Result};
use clap::Args;
use haul_lab::compare::{self, Grid, QueueSize, RunResult, Tools, Transport};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// `haul lab compare` options. Lists are comma-separated.
#[derive(Args)]
pub struct CompareArgs {
    /// Link rates [default: 45M,155M,1G; --quick: 100M].
    #[arg(long, value_name = "RATE,…")]
    rates: Option<String>,
    /// Round-trip times [default: 0ms,10ms,20ms,30ms,100ms,300ms; --quick: 10ms,50ms].
    #[arg(long, value_name = "RTT,…")]
    rtts: Option<String>,
    /// Random loss rates, both directions [default: 0,1%].
    #[arg(long, value_name = "LOSS,…")]
    losses: Option<String>,
    /// Transports: haul, cubic, bbr, udt4, and haul-enc (haul encrypted, as `haul copy` runs it)
    /// [default: haul,cubic,bbr,udt4].
    #[arg(long, value_name = "NAME,…")]
    transports: Option<String>,
    /// Length of each transfer [default: 10s; --quick: 3s].
    #[arg(long, value_parser = units::parse_duration)]
    time: Option<Duration>,
    /// Leave the first N seconds of each transfer out of its goodput (start-up), as iperf3's
    /// --omit; each transfer runs N seconds longer. Not with udt4, whose peer measures whole
    /// transfers.
    #[arg(long, default_value_t = 0, value_name = "SECONDS")]
    omit: u32,
    /// Bottleneck queue: 1bdp, 50ms or 256K.
    #[arg(long, default_value = "1bdp", value_parser = parse_queue)]
    queue: QueueSize,
    /// Transfers per transport and cell, the transports taking turns (side by side). Tables,
    /// plots and --json show each cell's median run; results.csv and results.json keep every run.
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=99))]
    repeat: u32,
    /// A small grid that runs in about a minute (used in CI).
    #[arg(long)]
    quick: bool,
    /// Directory for results.csv, results.json, wins.md and the SVG plots.
    #[arg(long, default_value = "haul-lab-results", value_name = "DIR")]
    out: PathBuf,
    /// Print the results as JSON on stdout as well.
    #[arg(long)]
    json: bool,
}

fn list<T>(s: &str, parse: impl Fn(&str) -> Result<T, String>, what: &str) -> Result<Vec<T>> {
    s.split(',')
        .map(|x| parse(x.trim()).map_err(|e| anyhow::anyhow!("--{what}: {e}")))
        .collect()
}

impl CompareArgs {
    fn grid(&self) -> Result<Grid> {
        let pick = |given: &Option<String>, full: &'static str, quick: &'static str| {
            given
                .clone()
                .unwrap_or_else(|| (if self.quick { quick } else { full }).to_owned())
        };
        let transports = list(
            &pick(
                &self.transports,
                "haul,cubic,bbr,udt4",
                "haul,cubic,bbr,udt4",
            ),
            |s| {
                Transport::parse(s).ok_or_else(|| {
                    format!("unknown transport `{s}` (haul, cubic, bbr, udt4, haul-enc)")
                })
            },
            "transports",
        )?;
        let grid = Grid {
            rates: list(
                &pick(&self.rates, "45M,155M,1G", "100M"),
                units::parse_rate,
                "rates",
            )?,
            rtts: list(
                &pick(&self.rtts, "0ms,10ms,20ms,30ms,100ms,300ms", "10ms,50ms"),
                units::parse_duration,
                "rtts",
            )?,
            losses: list(
                &pick(&self.losses, "0,1%", "0,1%"),
                units::parse_fraction,
                "losses",
            )?,
            transports,
            duration: self
                .time
                .unwrap_or(Duration::from_secs(if self.quick { 3 } else { 10 })),
            omit: self.omit,
            queue: self.queue,
            repeat: self.repeat as usize,
        };
        if grid.runs() == 0 {
            bail!("the grid is empty");
        }
        if grid.omit > 0 && grid.transports.contains(&Transport::Udt4) {
            bail!(
                "--omit: the UDT4 peer measures whole transfers; leave udt4 out of --transports \
                 or run without --omit"
            );
        }
        Ok(grid)
    }
}

fn progress_line(index: usize, total: usize, r: &RunResult, eta: Duration) -> String {
    let outcome = match &r.error {
        Some(e) => format!("failed: {e}"),
        None => format!(
            "{:>13}  efficiency {:.2}  start-up {}{}  RTT {}  (emulator {:.0} % of a core)",
            units::rate(r.goodput_bps),
            r.efficiency,
            r.startup_s.map_or("-".to_owned(), |s| format!("{s:.1} s")),
            r.link_startup_s
                .map_or(String::new(), |s| format!(" (link {s:.1} s)")),
            r.rtt_inflation
                .map_or("-".to_owned(), |x| format!("{:+.0} %", x * 100.0)),
            r.emulator_cpu * 100.0
        ),
    };
    format!(
        "[{index:>3}/{total}] {:>10} {:>6} ms {:>5} {:<8} {outcome}  ETA {}s",
        units::rate(r.rate_bps as f64),
        r.rtt_ms,
        haul_lab::plot::format_percent(r.loss),
        r.transport.name(),
        eta.as_secs()
    )
}

/// Runs `haul lab compare`.
pub fn run(args: CompareArgs) -> Result<ExitCode> {
    let grid = args.grid()?;
    let haul = std::env::current_exe().context("cannot find the haul binary itself")?;
    let tools = Tools::detect(haul);
    if tools.iperf3.is_none() {
        eprintln!("haul lab: iperf3 not found; TCP runs use `haul perf --tcp`");
    }
    if let (Err(why), true) = (&tools.udt_peer, grid.transports.contains(&Transport::Udt4)) {
        eprintln!("haul lab: udt4 runs will be skipped: {why}");
    }
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    let total = grid.runs();
    let per_run = grid.duration + Duration::from_secs(u64::from(grid.omit) + 1);
    eprintln!(
        "haul lab: {total} transfers of {:?} each (about {} min)",
        grid.duration,
        (per_run * total as u32).as_secs().div_ceil(60)
    );
    let started = Instant::now();
    let results = compare::run(&grid, &tools, |done, r| {
        let eta = started
            .elapsed()
            .mul_f64((total - done) as f64 / done as f64);
        eprintln!("{}", progress_line(done, total, r, eta));
    })?;
    let write = |name: &str, text: String| {
        let path = args.out.join(name);
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))
    };
    write("results.csv", compare::csv(&results))?;
    write("results.json", serde_json::to_string_pretty(&results)?)?;
    let medians = compare::medians(&results);
    let wins = compare::wins_table(&medians);
    write(
        "wins.md",
        format!(
            "# Which transport wins\n\nEach transport's median run per cell (of an even number of \
             runs the lower middle one); results.csv has every run.\n{wins}"
        ),
    )?;
    let plots = haul_lab::plot::write_all(&medians, &args.out).map_err(anyhow::Error::msg)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&medians)?);
    } else if std::io::stdout().is_terminal() || !args.json {
        println!("{wins}");
    }
    eprintln!(
        "haul lab: wrote results.csv, results.json, wins.md and {} plots to {}",
        plots.len(),
        args.out.display()
    );
    let failed = results.iter().filter(|r| r.error.is_some()).count();
    if failed > 0 {
        eprintln!(
            "haul lab: {failed} of {total} transfers failed or were skipped (see the error column)"
        );
    }
    Ok(ExitCode::SUCCESS)
}
