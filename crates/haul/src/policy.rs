//! The transfer policy options shared by the commands that send: `--policy`, `--rate`,
//! `--min-rate`, `--max-rate`.

use crate::units;
use anyhow::{bail, Result};
use clap::{Args, ValueEnum};
use haul_net::{CongestionControlFactory, FixedRateFactory, ModelRateFactory, Policy};
use std::sync::Arc;

/// How a sender shares the path.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PolicyArg {
    /// Fill the path and share it with other flows (default).
    Fair,
    /// Send at --rate whatever happens, like Aspera's fixed policy.
    Fixed,
    /// Use only what others leave; back off as soon as a queue builds (like LEDBAT).
    Scavenger,
}

#[derive(Args, Clone)]
pub struct PolicyArgs {
    /// How to share the path with other traffic.
    #[arg(long, value_enum, default_value = "fair")]
    pub policy: PolicyArg,
    /// Target rate for --policy fixed, bits per second (e.g. 500M, 2G).
    #[arg(long, short = 'b', value_parser = units::parse_rate)]
    pub rate: Option<u64>,
    /// Never send slower than this (bits per second; fair and scavenger policies).
    #[arg(long, value_parser = units::parse_rate)]
    pub min_rate: Option<u64>,
    /// Never send faster than this (bits per second; fair and scavenger policies).
    #[arg(long, value_parser = units::parse_rate)]
    pub max_rate: Option<u64>,
}

impl PolicyArgs {
    /// Whether anything other than the default (fair, no limits) was asked for.
    pub fn is_default(&self) -> bool {
        self.policy == PolicyArg::Fair
            && self.rate.is_none()
            && self.min_rate.is_none()
            && self.max_rate.is_none()
    }

    /// The congestion controller these options ask for.
    pub fn factory(&self) -> Result<Arc<dyn CongestionControlFactory>> {
        let model = |policy| -> Arc<dyn CongestionControlFactory> {
            Arc::new(ModelRateFactory {
                policy,
                min_bps: self.min_rate,
                max_bps: self.max_rate,
            })
        };
        Ok(match (self.policy, self.rate) {
            (PolicyArg::Fixed, Some(bits_per_second)) => {
                Arc::new(FixedRateFactory { bits_per_second })
            }
            (PolicyArg::Fixed, None) => bail!("--policy fixed needs --rate (e.g. --rate 500M)"),
            (_, Some(_)) => {
                bail!("--rate sets the fixed policy's rate; use --max-rate to cap the others")
            }
            (PolicyArg::Fair, None) => model(Policy::Fair),
            (PolicyArg::Scavenger, None) => model(Policy::Scavenger),
        })
    }
}
