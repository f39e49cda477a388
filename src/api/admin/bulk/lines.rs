//! A bulk body cut into lines as its bytes arrive, in pieces of any size.

/// The lines of a body that arrives in pieces. Each byte is looked at once by the search for
/// line ends: the search goes on where it stopped, so a long line sent a byte at a time costs
/// what it costs sent whole, not its length once per piece.
#[derive(Debug, Default)]
pub(super) struct Lines {
    /// Bytes received and not yet handed out: whole lines not yet taken, then the line being
    /// received.
    pending: Vec<u8>,
    /// Where the next line starts in `pending`.
    start: usize,
    /// How far the search for the next line end has looked: `pending[start..searched]` holds
    /// no newline.
    searched: usize,
    /// Bytes looked at by the search for line ends, in all: what a line costs, for the tests.
    #[cfg(test)]
    looked_at: usize,
}

impl Lines {
    /// Adds the next piece of the body. Drops the lines handed out first, so `pending` holds
    /// only what is not yet a line (each byte is moved at most once: a line is taken whole
    /// before the next piece comes).
    pub(super) fn push(&mut self, piece: &[u8]) {
        if self.start > 0 {
            self.pending.drain(..self.start);
            self.searched -= self.start;
            self.start = 0;
        }
        self.pending.extend_from_slice(piece);
    }

    /// The next whole line, without its line end (`\n` or `\r\n`); `None` until its newline
    /// arrives.
    pub(super) fn next_line(&mut self) -> Option<&[u8]> {
        let from = self.searched;
        let found = self.pending[from..].iter().position(|&b| b == b'\n');
        #[cfg(test)]
        {
            self.looked_at += found.map_or(self.pending.len() - from, |at| at + 1);
        }
        let Some(at) = found else {
            self.searched = self.pending.len();
            return None;
        };
        let end = from + at;
        let line = self.start..end;
        self.start = end + 1;
        self.searched = self.start;
        Some(without_cr(&self.pending[line]))
    }

    /// The last line, at the end of the body, when it has no newline of its own.
    pub(super) fn last_line(&mut self) -> Option<&[u8]> {
        if self.start == self.pending.len() {
            return None;
        }
        let line = self.start..self.pending.len();
        self.start = self.pending.len();
        self.searched = self.start;
        Some(without_cr(&self.pending[line]))
    }

    /// The bytes received of the line not yet ended.
    pub(super) fn unfinished(&self) -> usize {
        self.pending.len() - self.start
    }
}

fn without_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

#[cfg(test)]
mod tests {
    use super::Lines;

    /// Every line of `body` sent in pieces of `size` bytes, and the bytes looked at.
    fn split(body: &[u8], size: usize) -> (Vec<Vec<u8>>, usize) {
        let mut lines = Lines::default();
        let mut out = Vec::new();
        for piece in body.chunks(size) {
            lines.push(piece);
            while let Some(line) = lines.next_line() {
                out.push(line.to_vec());
            }
        }
        if let Some(line) = lines.last_line() {
            out.push(line.to_vec());
        }
        (out, lines.looked_at)
    }

    #[test]
    fn a_long_line_sent_a_byte_at_a_time_is_looked_at_once() {
        let mut body = vec![b'x'; 16 * 1024];
        body.push(b'\n');
        let (lines, looked_at) = split(&body, 1);
        assert_eq!(lines, vec![vec![b'x'; 16 * 1024]]);
        // Each byte once: sent whole, the line costs the same.
        assert_eq!(looked_at, body.len());
        assert_eq!(split(&body, body.len()).1, body.len());
    }

    #[test]
    fn lines_come_out_the_same_whatever_the_pieces() {
        let body = b"{\"a\":1}\r\n\n{\"b\":2}\nlast without newline".to_vec();
        let want: Vec<Vec<u8>> = vec![
            b"{\"a\":1}".to_vec(),
            b"".to_vec(),
            b"{\"b\":2}".to_vec(),
            b"last without newline".to_vec(),
        ];
        for size in 1..=body.len() {
            let (lines, looked_at) = split(&body, size);
            assert_eq!(lines, want, "pieces of {size}");
            assert!(looked_at <= body.len(), "pieces of {size}: {looked_at}");
        }
    }

    #[test]
    fn the_unfinished_line_is_what_came_after_the_last_newline() {
        let mut lines = Lines::default();
        lines.push(b"one\ntw");
        assert_eq!(lines.next_line(), Some(&b"one"[..]));
        assert_eq!(lines.next_line(), None);
        assert_eq!(lines.unfinished(), 2);
        lines.push(b"o");
        assert_eq!(lines.next_line(), None);
        assert_eq!(lines.unfinished(), 3);
        assert_eq!(lines.last_line(), Some(&b"two"[..]));
        assert_eq!(lines.unfinished(), 0);
        assert_eq!(lines.last_line(), None);
    }
}
