//! Content codings of answers: `Accept-Encoding` read with its quality values (RFC 9110,
//! 12.5.3), and bodies compressed with zstd, brotli or gzip.
//!
//! Bodies are whole `Bytes` here, so each is compressed in one call, without streaming
//! framing. The levels were chosen by measuring a 50-job search page (benches/RESULTS.md):
//! past them each step costs far more time than it saves bytes. Compressed answers are kept
//! by entity tag (`render::RenderCache::compressed`), so a page asked for again costs a
//! lookup, not a compression.

use std::cell::RefCell;
use std::io::Write;

use bytes::Bytes;
use http::header::{HeaderMap, HeaderValue, ACCEPT_ENCODING};

/// A content coding this API sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Coding {
    /// Zstandard (RFC 8878).
    Zstd,
    /// Brotli (RFC 7932).
    Brotli,
    /// gzip (RFC 1952).
    Gzip,
}

/// zstd level, measured on a 50-job page (56,716 bytes): 3 gives 12,859 bytes at 463 MB/s;
/// 5 saves 2 % more at a quarter of the speed, 9 5 % at a seventh; 1 and 2 are 4 % larger
/// for only a quarter more speed.
const ZSTD_LEVEL: i32 = 3;
/// brotli quality, on the same page (libbrotli through Python, one core): 3 gives 13,102
/// bytes in 222 µs, 2 % more than zstd 3; 4 gives 12,849 in 496 µs, 5 11,894 in 848 µs. A
/// page the compressed cache misses pays this on every request, so the cheap end wins.
const BROTLI_QUALITY: u32 = 3;
/// brotli window: 2^20 bytes, more than any answer, so no larger window can help.
const BROTLI_WINDOW: u32 = 20;
/// gzip level, on the same page (zlib through Python): 4 gives 13,310 bytes in 450 µs, 4 %
/// more than zstd 3; 5 12,868 in 715 µs, 6 12,645 in 1,010 µs; 1 is 16 % larger than 4.
const GZIP_LEVEL: u32 = 4;

/// Bodies shorter than this are sent as they are: a few hundred bytes gain little, and the
/// coding's own header and the client's work to undo it eat much of that.
pub(crate) const MIN_COMPRESSED_BYTES: usize = 1024;

impl Coding {
    /// Server preference among codings a client rates equally: the smallest and cheapest
    /// to undo first.
    const PREFERENCE: [Coding; 3] = [Coding::Zstd, Coding::Brotli, Coding::Gzip];

    /// The token for `Content-Encoding`.
    pub(crate) fn token(self) -> &'static str {
        match self {
            Coding::Zstd => "zstd",
            Coding::Brotli => "br",
            Coding::Gzip => "gzip",
        }
    }

    /// The `Content-Encoding` header value.
    pub(crate) fn header(self) -> HeaderValue {
        HeaderValue::from_static(self.token())
    }

    /// `body`, compressed.
    pub(crate) fn compress(self, body: &[u8]) -> Bytes {
        let compressed = match self {
            Coding::Zstd => zstd_compress(body),
            Coding::Brotli => brotli_compress(body),
            Coding::Gzip => gzip_compress(body),
        };
        Bytes::from(compressed)
    }
}

thread_local! {
    /// One zstd context per thread: making one allocates and clears its tables, which costs
    /// about as much as compressing a small page.
    static ZSTD: RefCell<Option<zstd::bulk::Compressor<'static>>> = const { RefCell::new(None) };
}

fn zstd_compress(body: &[u8]) -> Vec<u8> {
    let compressed = ZSTD.with_borrow_mut(|slot| {
        if slot.is_none() {
            *slot = zstd::bulk::Compressor::new(ZSTD_LEVEL).ok();
        }
        slot.as_mut()?.compress(body).ok()
    });
    // zstd fails only to allocate; a fresh one-shot call then says so or succeeds.
    compressed
        .or_else(|| zstd::bulk::compress(body, ZSTD_LEVEL).ok())
        .unwrap_or_default()
}

fn brotli_compress(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() / 4);
    {
        let mut writer =
            brotli::CompressorWriter::new(&mut out, 4096, BROTLI_QUALITY, BROTLI_WINDOW);
        // Writing to a `Vec` cannot fail.
        let _ = writer.write_all(body);
    }
    out
}

fn gzip_compress(body: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(
        Vec::with_capacity(body.len() / 4),
        flate2::Compression::new(GZIP_LEVEL),
    );
    // Writing to a `Vec` cannot fail.
    let _ = encoder.write_all(body);
    encoder.finish().unwrap_or_default()
}

/// What a request's `Accept-Encoding` allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Accepted {
    /// The coding to use for a body worth compressing, if the client takes any of ours.
    pub(crate) coding: Option<Coding>,
    /// Whether the body may be sent as it is (`identity`).
    pub(crate) identity: bool,
}

impl Accepted {
    /// What a request without `Accept-Encoding` gets: the body as it is. RFC 9110 lets a
    /// server pick any coding then, but a client that says nothing may not undo one.
    pub(crate) const IDENTITY: Accepted = Accepted {
        coding: None,
        identity: true,
    };

    /// Reads every `Accept-Encoding` field of a request. Never fails: an item that does not
    /// parse is ignored, as if not sent, so the answer can only get plainer.
    pub(crate) fn of(headers: &HeaderMap) -> Accepted {
        let mut fields = headers.get_all(ACCEPT_ENCODING).iter().peekable();
        if fields.peek().is_none() {
            return Accepted::IDENTITY;
        }
        let mut q = Qualities::default();
        for field in fields {
            for item in field.as_bytes().split(|&b| b == b',') {
                q.read(item);
            }
        }
        q.decide()
    }

    /// The coding for a body of `len` bytes: none for a short one when `identity` is
    /// acceptable.
    pub(crate) fn coding_for(self, len: usize) -> Option<Coding> {
        match self.coding {
            Some(_) if self.identity && len < MIN_COMPRESSED_BYTES => None,
            coding => coding,
        }
    }
}

/// Quality values in thousandths, as named in the header; `None` when not named.
#[derive(Default)]
struct Qualities {
    zstd: Option<u16>,
    brotli: Option<u16>,
    gzip: Option<u16>,
    identity: Option<u16>,
    star: Option<u16>,
}

impl Qualities {
    /// One list item: `coding` and optionally `;q=value` (other parameters are ignored).
    fn read(&mut self, item: &[u8]) {
        let mut parts = item.split(|&b| b == b';');
        let name = parts.next().unwrap_or_default().trim_ascii();
        if name.is_empty() {
            return;
        }
        let mut quality = 1000;
        for param in parts {
            let param = param.trim_ascii();
            let Some((key, value)) = param
                .iter()
                .position(|&b| b == b'=')
                .map(|i| param.split_at(i))
            else {
                continue;
            };
            if key.trim_ascii().eq_ignore_ascii_case(b"q") {
                match qvalue(value[1..].trim_ascii()) {
                    Some(q) => quality = q,
                    // A quality value that does not parse leaves the item unread.
                    None => return,
                }
            }
        }
        let slot = match name.to_ascii_lowercase().as_slice() {
            b"zstd" => &mut self.zstd,
            b"br" => &mut self.brotli,
            // RFC 9110 (8.4.1.3): a recipient should treat `x-gzip` as `gzip`.
            b"gzip" | b"x-gzip" => &mut self.gzip,
            b"identity" => &mut self.identity,
            b"*" => &mut self.star,
            _ => return,
        };
        // Named twice, the higher quality counts, as the most generous reading.
        *slot = Some(slot.map_or(quality, |q| q.max(quality)));
    }

    fn decide(&self) -> Accepted {
        let of = |named: Option<u16>| named.or(self.star).unwrap_or(0);
        // `identity` is acceptable unless refused by name, or by `*;q=0` without naming it.
        let identity_q = self.identity.or(self.star).unwrap_or(1000);
        let mut best: Option<(Coding, u16)> = None;
        for coding in Coding::PREFERENCE {
            let q = of(match coding {
                Coding::Zstd => self.zstd,
                Coding::Brotli => self.brotli,
                Coding::Gzip => self.gzip,
            });
            if q > 0 && best.is_none_or(|(_, b)| q > b) {
                best = Some((coding, q));
            }
        }
        // A client that rates `identity` above every coding it takes gets the body plain.
        let coding = best
            .filter(|(_, q)| self.identity.is_none_or(|identity| *q >= identity))
            .map(|(c, _)| c);
        Accepted {
            coding,
            identity: identity_q > 0,
        }
    }
}

/// A quality value (`0`, `0.5`, `1.000`…) in thousandths; `None` if it is not one.
fn qvalue(value: &[u8]) -> Option<u16> {
    let (int, frac) = match value.iter().position(|&b| b == b'.') {
        Some(i) => (&value[..i], &value[i + 1..]),
        None => (value, &[][..]),
    };
    if int.len() != 1 || frac.len() > 3 || !frac.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut thousandths = u16::from(int[0].checked_sub(b'0').filter(|d| *d <= 1)?) * 1000;
    for (i, d) in frac.iter().enumerate() {
        thousandths += u16::from(d - b'0') * [100, 10, 1][i];
    }
    (thousandths <= 1000).then_some(thousandths)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn accepted(value: &str) -> Accepted {
        let mut h = HeaderMap::new();
        h.insert(ACCEPT_ENCODING, HeaderValue::from_str(value).unwrap());
        Accepted::of(&h)
    }

    fn chosen(value: &str) -> Option<Coding> {
        accepted(value).coding
    }

    #[test]
    fn quality_values_parse_as_rfc_9110_writes_them() {
        assert_eq!(qvalue(b"1"), Some(1000));
        assert_eq!(qvalue(b"1.000"), Some(1000));
        assert_eq!(qvalue(b"0.5"), Some(500));
        assert_eq!(qvalue(b"0.125"), Some(125));
        assert_eq!(qvalue(b"0"), Some(0));
        for bad in ["", "1.5", "2", "0.1234", "-1", "x", "0.a", ".5"] {
            assert_eq!(qvalue(bad.as_bytes()), None, "{bad}");
        }
    }

    #[test]
    fn the_highest_quality_wins_and_ties_go_to_zstd_then_brotli() {
        assert_eq!(chosen("gzip, br, zstd"), Some(Coding::Zstd));
        assert_eq!(chosen("gzip, br"), Some(Coding::Brotli));
        assert_eq!(chosen("gzip;q=0.5, br;q=1"), Some(Coding::Brotli));
        assert_eq!(chosen("zstd;q=0.1, gzip;q=0.9"), Some(Coding::Gzip));
        assert_eq!(chosen("x-gzip"), Some(Coding::Gzip));
        assert_eq!(chosen("GZIP ; Q=0.8"), Some(Coding::Gzip));
        assert_eq!(chosen("*"), Some(Coding::Zstd));
        assert_eq!(chosen("*;q=0.5, zstd;q=0"), Some(Coding::Brotli));
        assert_eq!(chosen("deflate, compress"), None);
        assert_eq!(chosen(""), None);
    }

    #[test]
    fn identity_is_refused_only_by_name_or_by_a_star_of_zero() {
        assert!(accepted("gzip").identity);
        assert!(!accepted("identity;q=0").identity);
        assert!(!accepted("*;q=0").identity);
        assert!(accepted("*;q=0, identity").identity);
        assert_eq!(chosen("*;q=0"), None);
        // Preferred above every coding, identity is what is sent.
        assert_eq!(chosen("gzip;q=0.5, identity"), None);
        assert_eq!(chosen("gzip, identity;q=0.5"), Some(Coding::Gzip));
    }

    #[test]
    fn items_that_do_not_parse_are_ignored() {
        assert_eq!(chosen("gzip;q=2, br;q=nope"), None);
        assert!(accepted("identity;q=zero").identity);
        assert_eq!(chosen(",,; ;q=1,gzip"), Some(Coding::Gzip));
        assert_eq!(chosen("gzip;level=9;q=0.3"), Some(Coding::Gzip));
    }

    #[test]
    fn short_bodies_stay_plain_unless_plain_is_refused() {
        let a = accepted("gzip");
        assert_eq!(a.coding_for(MIN_COMPRESSED_BYTES - 1), None);
        assert_eq!(a.coding_for(MIN_COMPRESSED_BYTES), Some(Coding::Gzip));
        let forced = accepted("gzip, identity;q=0");
        assert_eq!(forced.coding_for(10), Some(Coding::Gzip));
    }

    #[test]
    fn each_coding_round_trips() {
        let body = br#"{"data":[{"role":"Rust engineer"}],"pagination":{}}"#.repeat(100);
        let z = Coding::Zstd.compress(&body);
        assert_eq!(zstd::bulk::decompress(&z, body.len()).unwrap(), body);
        let mut out = Vec::new();
        brotli::Decompressor::new(&Coding::Brotli.compress(&body)[..], 4096)
            .read_to_end(&mut out)
            .unwrap();
        assert_eq!(out, body);
        out.clear();
        flate2::read::GzDecoder::new(&Coding::Gzip.compress(&body)[..])
            .read_to_end(&mut out)
            .unwrap();
        assert_eq!(out, body);
    }
}
