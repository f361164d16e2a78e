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
    /// Rate in bits per second (e.g. 500M, 2G): the rate to send at with --policy fixed, a cap
    /// (like --max-rate) otherwise.
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
        let model = |policy, cap: Option<u64>| -> Arc<dyn CongestionControlFactory> {
            Arc::new(ModelRateFactory {
                policy,
                min_bps: self.min_rate,
                max_bps: cap.or(self.max_rate),
            })
        };
        Ok(match (self.policy, self.rate) {
            (PolicyArg::Fixed, Some(bits_per_second)) => {
                Arc::new(FixedRateFactory { bits_per_second })
            }
            (PolicyArg::Fixed, None) => bail!("--policy fixed needs --rate (e.g. --rate 500M)"),
            (_, Some(_)) if self.max_rate.is_some() => {
                bail!("--rate and --max-rate both cap the rate: give one")
            }
            (PolicyArg::Fair, cap) => model(Policy::Fair, cap),
            (PolicyArg::Scavenger, cap) => model(Policy::Scavenger, cap),
        })
    }

    /// The same options as command-line arguments (to pass them to the far side).
    pub fn to_args(&self) -> Vec<String> {
        let mut args = vec![
            "--policy".to_string(),
            self.policy
                .to_possible_value()
                .expect("no skipped variants")
                .get_name()
                .to_string(),
        ];
        for (flag, value) in [
            ("--rate", self.rate),
            ("--min-rate", self.min_rate),
            ("--max-rate", self.max_rate),
        ] {
            if let Some(v) = value {
                args.extend([flag.to_string(), v.to_string()]);
            }
        }
        args
    }
}
