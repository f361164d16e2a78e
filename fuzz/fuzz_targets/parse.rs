//! Any bytes into the packet parser: a value or an error, never a panic; values re-encode to
//! bytes that parse to the same value.
#![no_main]

use haul_proto::wire::Packet;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(packet) = Packet::parse(data) {
        let again = packet.to_vec();
        assert_eq!(Packet::parse(&again).ok(), Some(packet));
    }
});
