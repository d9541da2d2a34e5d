//! JSONL files of sessions: one [`SessionInput`] JSON object per line, e.g.
//!
//! ```text
//! {"id": "s1", "date": "2023-05-30 23:40", "messages": [{"role": "user", "text": "hi"}]}
//! ```
//!
//! Blank lines are skipped. Each session is validated ([`SessionInput::validate`]); errors
//! name the 1-based line (`line 17, session "s1" message 3: field `text` is empty`). The file
//! may be gzip-compressed. Session ids are not checked for uniqueness across lines: that is
//! the caller's policy.
use crate::error::{split_json_error, FormatError};
use crate::io::open_reader;
use cairn_core::{InputError, SessionInput};
use std::io::BufRead;
use std::path::{Path, PathBuf};

/// Parse and validate one JSONL line (`line_no` is 1-based and only used in errors).
pub fn parse_session_line(line_no: usize, line: &str) -> Result<SessionInput, InputError> {
    let rec = format!("line {line_no}");
    let session: SessionInput = serde_json::from_str(line).map_err(|e| {
        let (msg, pos) = split_json_error(&e);
        match pos {
            Some((_, col)) => InputError::new(&rec, format!("column {col}: {msg}")),
            None => InputError::new(&rec, msg),
        }
    })?;
    session.validate().map_err(|e| e.within(&rec))
}

/// Streaming reader of a sessions JSONL file: yields one validated session per non-blank
/// line, or an error naming the file and the line. After an I/O error it stops; after a bad
/// line it goes on, so a caller may collect every bad line at once.
pub struct SessionLines {
    path: PathBuf,
    reader: Box<dyn BufRead + Send>,
    line_no: usize,
    buf: Vec<u8>,
    done: bool,
}

impl SessionLines {
    /// The 1-based number of the last line read.
    pub fn line_no(&self) -> usize {
        self.line_no
    }
}

impl Iterator for SessionLines {
    type Item = Result<SessionInput, FormatError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            self.buf.clear();
            match self.reader.read_until(b'\n', &mut self.buf) {
                Ok(0) => self.done = true,
                Ok(_) => {
                    self.line_no += 1;
                    let rec = format!("line {}", self.line_no);
                    let mut bytes: &[u8] = &self.buf;
                    if self.line_no == 1 {
                        bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
                    }
                    let line = match std::str::from_utf8(bytes) {
                        Ok(l) => l,
                        Err(e) => {
                            let err = InputError::new(
                                rec,
                                format!(
                                    "not valid UTF-8 (first bad byte at column {})",
                                    e.valid_up_to() + 1
                                ),
                            );
                            return Some(Err(FormatError::record(&self.path, err)));
                        }
                    };
                    if line.trim().is_empty() {
                        continue;
                    }
                    return Some(
                        parse_session_line(self.line_no, line)
                            .map_err(|e| FormatError::record(&self.path, e)),
                    );
                }
                Err(e) => {
                    self.done = true;
                    return Some(Err(FormatError::Io {
                        path: self.path.clone(),
                        source: e,
                    }));
                }
            }
        }
        None
    }
}

/// Open a sessions JSONL file (plain or gzip) for streaming.
pub fn open_sessions_jsonl(path: impl AsRef<Path>) -> Result<SessionLines, FormatError> {
    let path = path.as_ref();
    Ok(SessionLines {
        path: path.to_path_buf(),
        reader: open_reader(path)?,
        line_no: 0,
        buf: Vec::new(),
        done: false,
    })
}

/// Read every session of a JSONL file; fails on the first bad line, naming it.
pub fn read_sessions_jsonl(path: impl AsRef<Path>) -> Result<Vec<SessionInput>, FormatError> {
    open_sessions_jsonl(path)?.collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &tempfile::TempDir, name: &str, body: &str) -> PathBuf {
        let p = dir.path().join(name);
        std::fs::write(&p, body).unwrap();
        p
    }

    #[test]
    fn reads_sessions_and_skips_blank_lines() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(
            &dir,
            "s.jsonl",
            "\u{feff}{\"id\":\"s1\",\"date\":\"2023/05/30 (Tue) 23:40\",\"messages\":[{\"role\":\"user\",\"text\":\"hi\"}]}\n\
             \n   \r\n\
             {\"id\":\"s2\",\"group\":\"g\",\"messages\":[{\"speaker\":\"Ann\",\"text\":\"yo\"}]}\r\n",
        );
        let s = read_sessions_jsonl(&p).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].id, "s1");
        assert_eq!(s[0].messages[0].id, "0");
        assert_eq!(
            s[0].occurred_at.unwrap().to_rfc3339(),
            "2023-05-30T23:40:00+00:00"
        );
        assert_eq!(s[1].group.as_deref(), Some("g"));
    }

    #[test]
    fn errors_name_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let good = r#"{"id":"s1","messages":[{"role":"user","text":"hi"}]}"#;
        let cases = [
            // missing field
            (r#"{"id":"s2"}"#, "missing field `messages`"),
            // wrong type
            (r#"{"id":"s2","messages":"hi"}"#, "invalid type"),
            // bad date
            (
                r#"{"id":"s2","date":"the 5th","messages":[{"role":"user","text":"x"}]}"#,
                "\"the 5th\"",
            ),
            // truncated JSON
            (r#"{"id":"s2","messages":[{"role":"user","#, "EOF"),
            // validation error, with the session named
            (
                r#"{"id":"s2","messages":[{"role":"user","text":" "}]}"#,
                "session \"s2\" message 0: field `text` is empty",
            ),
        ];
        for (bad, problem) in cases {
            let p = write(&dir, "bad.jsonl", &format!("{good}\n\n{bad}\n{good}\n"));
            let e = read_sessions_jsonl(&p).unwrap_err();
            let s = e.to_string();
            assert!(s.contains("bad.jsonl: line 3"), "{s}");
            assert!(s.contains(problem), "{s}");
            // The streaming reader reports the bad line and goes on.
            let all: Vec<_> = open_sessions_jsonl(&p).unwrap().collect();
            assert_eq!(all.len(), 3);
            assert!(all[0].is_ok() && all[1].is_err() && all[2].is_ok());
        }
        let p = dir.path().join("u.jsonl");
        std::fs::write(&p, b"{\"id\":\"a\xff\"}\n").unwrap();
        let e = read_sessions_jsonl(&p).unwrap_err();
        assert!(e.to_string().contains("line 1: not valid UTF-8"), "{e}");
    }
}
