//! Two byte streams over one haul stream, each able to end on its own.
//!
//! rsync needs a half-close: it ends its side of the conversation and keeps reading the other.
//! A haul stream has none (the UDT4 shutdown closes both ways), so each direction goes in frames:
//! a 4-byte big-endian length, then that many bytes; an empty frame ends the direction.

use std::io::{self, Read, Write};

/// Largest frame payload.
pub const MAX_FRAME: usize = 64 << 10;

/// Copies `input` to `out` in frames, each sent as soon as it is read (rsync waits for answers:
/// nothing may sit in a buffer), then the end frame. Returns the payload bytes sent.
pub fn send_frames(mut input: impl Read, out: &mut impl Write) -> io::Result<u64> {
    let mut buf = vec![0u8; 4 + MAX_FRAME];
    let mut total = 0u64;
    loop {
        let n = match input.read(&mut buf[4..]) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        buf[..4].copy_from_slice(&(n as u32).to_be_bytes());
        out.write_all(&buf[..4 + n])?;
        out.flush()?;
        if n == 0 {
            return Ok(total);
        }
        total += n as u64;
    }
}

/// Copies frames from `input` to `out` until the end frame, flushing after each. Returns the
/// payload bytes received; an error if `input` ends first or a frame is larger than
/// [`MAX_FRAME`].
pub fn receive_frames(input: &mut impl Read, mut out: impl Write) -> io::Result<u64> {
    let mut buf = vec![0u8; MAX_FRAME];
    let mut total = 0u64;
    loop {
        let mut header = [0u8; 4];
        input.read_exact(&mut header).map_err(|e| {
            if e.kind() == io::ErrorKind::UnexpectedEof {
                io::Error::new(e.kind(), "the connection ended in the middle of the data")
            } else {
                e
            }
        })?;
        let len = u32::from_be_bytes(header) as usize;
        if len == 0 {
            return Ok(total);
        }
        if len > MAX_FRAME {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("a frame of {len} bytes (at most {MAX_FRAME}): not a haul rsync peer"),
            ));
        }
        input.read_exact(&mut buf[..len])?;
        out.write_all(&buf[..len])?;
        out.flush()?;
        total += len as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_survive_framing_and_the_end_frame_stops_the_reader() {
        let data: Vec<u8> = (0..200_000u32).map(|i| (i * 7) as u8).collect();
        let mut wire = Vec::new();
        assert_eq!(send_frames(&data[..], &mut wire).unwrap(), 200_000);
        // Whatever follows the end frame belongs to someone else.
        wire.extend_from_slice(b"trailing");
        let mut reader = &wire[..];
        let mut out = Vec::new();
        assert_eq!(receive_frames(&mut reader, &mut out).unwrap(), 200_000);
        assert_eq!(out, data);
        assert_eq!(reader, b"trailing");
    }

    #[test]
    fn a_cut_stream_and_an_oversized_frame_are_errors() {
        let mut wire = Vec::new();
        send_frames(&b"hello"[..], &mut wire).unwrap();
        let cut = &wire[..wire.len() - 4];
        let err = receive_frames(&mut &cut[..], Vec::new()).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);

        let huge = ((MAX_FRAME + 1) as u32).to_be_bytes();
        let err = receive_frames(&mut &huge[..], Vec::new()).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
    }
}
