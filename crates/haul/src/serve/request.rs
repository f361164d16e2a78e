//! What a client of `haul serve` asks and what it is told, before the file engine takes over the
//! stream: one request and one reply, each a 4-byte big-endian length and a JSON object.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::io::{self, Read, Write};

/// Version of this exchange; a server refuses any other.
pub const VERSION: u32 = 1;
/// Largest request or reply accepted (bytes of JSON).
const MAX_LEN: usize = 64 << 10;

/// What the client wants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    /// The modules this client may use.
    List,
    /// The server sends `paths` of `module`.
    Download,
    /// The server receives into `paths[0]` of `module`.
    Upload,
}

/// The client's request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Request {
    /// [`VERSION`].
    pub version: u32,
    /// What to do.
    pub op: Op,
    /// The module (empty for [`Op::List`]).
    #[serde(default)]
    pub module: String,
    /// Paths inside the module, `/`-separated; empty or absent: the module's top.
    #[serde(default)]
    pub paths: Vec<String>,
    /// Ignore partial files of earlier attempts.
    #[serde(default)]
    pub no_resume: bool,
    /// Download: mirror (the client removes what the module's directories do not have).
    #[serde(default)]
    pub delete: bool,
    /// Download: only tell the client what would travel.
    #[serde(default)]
    pub dry_run: bool,
}

/// A module as listed to a client.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModuleInfo {
    /// Its name.
    pub name: String,
    /// The administrator's description.
    pub comment: String,
    /// Whether uploads are refused.
    pub read_only: bool,
}

/// The server's answer: go ahead (and the listing, for [`Op::List`]) or why not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reply {
    /// Why the request is refused; `None`: the file engine starts.
    pub error: Option<String>,
    /// For [`Op::List`].
    #[serde(default)]
    pub modules: Vec<ModuleInfo>,
}

/// Writes one message.
pub fn write<T: Serialize>(mut out: impl Write, message: &T) -> io::Result<()> {
    let json = serde_json::to_vec(message).map_err(io::Error::other)?;
    let mut framed = Vec::with_capacity(4 + json.len());
    framed.extend_from_slice(&(json.len() as u32).to_be_bytes());
    framed.extend_from_slice(&json);
    out.write_all(&framed)?;
    out.flush()
}

/// Reads one message, refusing one that is too long or not the expected JSON.
pub fn read<T: DeserializeOwned>(mut input: impl Read) -> io::Result<T> {
    let mut len = [0u8; 4];
    input.read_exact(&mut len)?;
    let len = u32::from_be_bytes(len) as usize;
    if len > MAX_LEN {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("a {len}-byte message (at most {MAX_LEN}): not a haul serve peer?"),
        ));
    }
    let mut json = vec![0u8; len];
    input.read_exact(&mut json)?;
    serde_json::from_slice(&json).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_round_trips_and_garbage_is_an_error() {
        let request = Request {
            version: VERSION,
            op: Op::Download,
            module: "data".into(),
            paths: vec!["a/b".into()],
            no_resume: true,
            delete: false,
            dry_run: true,
        };
        let mut wire = Vec::new();
        write(&mut wire, &request).unwrap();
        assert_eq!(read::<Request>(&wire[..]).unwrap(), request);
        // Too long, truncated, not JSON, unknown fields: errors, not panics.
        assert!(read::<Request>(&[0xff, 0xff, 0xff, 0xff][..]).is_err());
        assert!(read::<Request>(&wire[..wire.len() - 1]).is_err());
        assert!(read::<Request>(&[0, 0, 0, 2, b'{', b'x'][..]).is_err());
        let mut odd = Vec::new();
        write(
            &mut odd,
            &serde_json::json!({"version": 1, "op": "list", "x": 1}),
        )
        .unwrap();
        assert!(read::<Request>(&odd[..]).is_err());
    }
}
