//! Any bytes into the file engine's frame reader (what a `haul copy` peer sends): frames or an
//! error, never a panic; each frame writes back to bytes that read as the same frame.
#![no_main]

use haul_files::frame::Frame;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut input = data;
    while let Ok(Some(frame)) = Frame::read_from(&mut input) {
        let mut bytes = Vec::new();
        frame
            .write_to(&mut bytes)
            .expect("a frame that was read can be written");
        assert_eq!(Frame::read_from(&mut &bytes[..]).ok().flatten(), Some(frame));
    }
});
