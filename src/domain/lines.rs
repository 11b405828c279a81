//! Physical line numbers from byte offsets, as an editor counts them: a line
//! ends at `\n`, `\r\n` or a lone `\r`. The csv crate's own count is one
//! short on CRLF files (spreadsheets write them) and 1 for every row of a
//! CR-only one, so problems would send people to the wrong row.

/// Where each line after the first starts, fed as the bytes pass.
#[derive(Debug, Default)]
pub struct LineIndex {
    starts: Vec<u64>,
    offset: u64,
    after_cr: bool,
}

impl LineIndex {
    pub fn of(bytes: &[u8]) -> LineIndex {
        let mut index = LineIndex::default();
        index.feed(bytes);
        index
    }

    /// The next bytes of the file.
    pub fn feed(&mut self, chunk: &[u8]) {
        for (i, &b) in chunk.iter().enumerate() {
            let at = self.offset + i as u64;
            if b == b'\n' {
                // After \r the \n itself opens the next line: the csv reader
                // ends a record at the \r and starts the next at the \n.
                self.starts.push(if self.after_cr { at } else { at + 1 });
            } else if self.after_cr {
                self.starts.push(at); // a lone \r ended the line before this byte
            }
            self.after_cr = b == b'\r';
        }
        self.offset += chunk.len() as u64;
    }

    /// The line (from 1) holding the byte at `offset`.
    pub fn line_of(&self, offset: u64) -> u64 {
        self.starts.partition_point(|&s| s <= offset) as u64 + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_line_ending_counts_once() {
        let text = b"ab\ncd\r\nef\rgh\r\r\nij";
        let idx = LineIndex::of(text);
        let line = |needle: &[u8]| idx.line_of(text.windows(2).position(|w| w == needle).unwrap() as u64);
        assert_eq!([line(b"ab"), line(b"cd"), line(b"ef"), line(b"gh"), line(b"ij")], [1, 2, 3, 4, 6]);
        // Fed in pieces that split a \r\n: the same.
        let mut pieces = LineIndex::default();
        for chunk in text.chunks(1) {
            pieces.feed(chunk);
        }
        assert_eq!(pieces.starts, idx.starts);
    }
}
