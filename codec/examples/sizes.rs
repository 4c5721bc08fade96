fn main() {
    use std::mem::size_of;
    println!("Frame {}", size_of::<rocescope_codec::Frame>());
    println!("RocePacket {}", size_of::<rocescope_codec::ib::RocePacket>());
    println!("Warnings {}", size_of::<rocescope_codec::Warnings>());
    println!("Warning {}", size_of::<rocescope_codec::Warning>());
    println!("Net {}", size_of::<rocescope_codec::frame::Net>());
}
