//! The frames of an HTTP/2 client that says hello and then only acknowledges what the
//! protocol makes it (SETTINGS and PING): an idle client that a server's keep-alive pings
//! find alive. Plain bytes, no I/O: the hostile-client tests and the
//! `hostile_connections` load tool (`benches/compare`, which compiles this file too) drive it
//! over their own sockets.

/// The connection preface and an empty SETTINGS frame: what a client sends first.
pub const HELLO: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00";

const HEAD: usize = 9;
const SETTINGS: u8 = 0x4;
const PING: u8 = 0x6;
const GOAWAY: u8 = 0x7;
const ACK: u8 = 0x1;

/// What the server has sent so far.
#[derive(Clone, Copy, Debug, Default)]
pub struct Seen {
    /// Its SETTINGS: it is serving the connection.
    pub settings: bool,
    /// A GOAWAY: it is closing the connection.
    pub goaway: bool,
}

/// Takes the whole frames off the front of `received` (a part of one stays), notes what they
/// say in `seen`, and returns the acknowledgements to send back, empty when none is due.
pub fn acknowledge(received: &mut Vec<u8>, seen: &mut Seen) -> Vec<u8> {
    let mut reply = Vec::new();
    let mut at = 0;
    // Bounded by the bytes received: every round takes a whole frame off them.
    while received.len() - at >= HEAD {
        let frame = &received[at..];
        let len = usize::from(frame[0]) << 16 | usize::from(frame[1]) << 8 | usize::from(frame[2]);
        if frame.len() < HEAD + len {
            break;
        }
        let (kind, flags, payload) = (frame[3], frame[4], &frame[HEAD..HEAD + len]);
        match kind {
            SETTINGS if flags & ACK == 0 => {
                seen.settings = true;
                reply.extend_from_slice(&[0, 0, 0, SETTINGS, ACK, 0, 0, 0, 0]);
            }
            PING if flags & ACK == 0 => {
                reply.extend_from_slice(&[0, 0, 8, PING, ACK, 0, 0, 0, 0]);
                reply.extend_from_slice(payload);
            }
            GOAWAY => seen.goaway = true,
            _ => {}
        }
        at += HEAD + len;
    }
    received.drain(..at);
    reply
}
