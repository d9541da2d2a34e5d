//! Reading files: plain or gzip-compressed (detected by content, not by name), JSON
//! parsing with file-naming errors, and file hashes.
use crate::error::{split_json_error, FormatError};
use flate2::read::MultiGzDecoder;
use serde::de::{DeserializeOwned, Deserializer as _, SeqAccess, Visitor};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

pub(crate) fn io_err(path: &Path, source: std::io::Error) -> FormatError {
    FormatError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Open a file for buffered reading, decompressing it on the fly when it is gzip data
/// (recognised by its magic bytes, whatever its name).
pub fn open_reader(path: impl AsRef<Path>) -> Result<Box<dyn BufRead + Send>, FormatError> {
    let path = path.as_ref();
    let file = File::open(path).map_err(|e| io_err(path, e))?;
    let mut reader = BufReader::new(file);
    let head = reader.fill_buf().map_err(|e| io_err(path, e))?;
    if head.starts_with(&GZIP_MAGIC) {
        Ok(Box::new(BufReader::new(MultiGzDecoder::new(reader))))
    } else {
        Ok(Box::new(reader))
    }
}

/// The whole content of a file, decompressed when it is gzip data.
pub fn read_bytes(path: impl AsRef<Path>) -> Result<Vec<u8>, FormatError> {
    let path = path.as_ref();
    let mut out = Vec::new();
    open_reader(path)?
        .read_to_end(&mut out)
        .map_err(|e| io_err(path, e))?;
    Ok(out)
}

/// The whole content of a text file (plain or gzip), checked to be UTF-8. A leading byte
/// order mark is dropped.
pub fn read_text_file(path: impl AsRef<Path>) -> Result<String, FormatError> {
    let path = path.as_ref();
    let bytes = read_bytes(path)?;
    let mut text = String::from_utf8(bytes).map_err(|e| FormatError::Utf8 {
        path: path.to_path_buf(),
        offset: e.utf8_error().valid_up_to(),
    })?;
    if text.starts_with('\u{feff}') {
        text.drain(..'\u{feff}'.len_utf8());
    }
    Ok(text)
}

/// Parse a JSON file (plain `.json` or gzip-compressed `.json.gz`) into `T`; use
/// `T = serde_json::Value` for untyped access. Errors name the file and the position.
pub fn read_json_file<T: DeserializeOwned>(path: impl AsRef<Path>) -> Result<T, FormatError> {
    let path = path.as_ref();
    let text = read_text_file(path)?;
    serde_json::from_str(&text).map_err(|e| json_err(path, &e))
}

/// Hex SHA-256 of a file's bytes as stored (a `.gz` file is hashed compressed).
pub fn sha256_file(path: impl AsRef<Path>) -> Result<String, FormatError> {
    let path = path.as_ref();
    let mut file = File::open(path).map_err(|e| io_err(path, e))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut buf).map_err(|e| io_err(path, e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hex::encode(hasher.finalize()))
}

pub(crate) fn json_err(path: &Path, e: &serde_json::Error) -> FormatError {
    let (msg, pos) = split_json_error(e);
    let msg = match pos {
        Some((l, c)) => format!("line {l} column {c}: {msg}"),
        None => msg,
    };
    FormatError::Json {
        path: path.to_path_buf(),
        msg,
    }
}

/// Parse `text` (the content of `path`) as a top-level JSON array, handing each element to
/// `f` as it is parsed, so only one element's tree is in memory at a time. The first error
/// of `f` stops the parse and is returned as is.
pub(crate) fn for_each_array_element<F>(
    path: &Path,
    text: &str,
    what: &str,
    mut f: F,
) -> Result<(), FormatError>
where
    F: FnMut(usize, Value) -> Result<(), FormatError>,
{
    struct ArrayVisitor<'a, F> {
        f: &'a mut F,
        failed: &'a mut Option<FormatError>,
        what: &'a str,
    }
    impl<'de, F> Visitor<'de> for ArrayVisitor<'_, F>
    where
        F: FnMut(usize, Value) -> Result<(), FormatError>,
    {
        type Value = ();
        fn expecting(&self, out: &mut fmt::Formatter) -> fmt::Result {
            write!(out, "a JSON array of {}", self.what)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
            let mut i = 0usize;
            while let Some(v) = seq.next_element::<Value>()? {
                if let Err(e) = (self.f)(i, v) {
                    *self.failed = Some(e);
                    return Err(serde::de::Error::custom("stopped at a bad record"));
                }
                i += 1;
            }
            Ok(())
        }
    }

    let mut failed = None;
    let mut de = serde_json::Deserializer::from_str(text);
    let parsed = de
        .deserialize_seq(ArrayVisitor {
            f: &mut f,
            failed: &mut failed,
            what,
        })
        .and_then(|()| de.end());
    if let Some(e) = failed {
        return Err(e);
    }
    parsed.map_err(|e| json_err(path, &e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn reads_plain_and_gzip_json_alike() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("a.json");
        std::fs::write(&plain, br#"{"x": [1, 2]}"#).unwrap();
        // Gzip content under a name without `.gz`: detected by magic bytes.
        let gz = dir.path().join("b.data");
        let mut enc = flate2::write::GzEncoder::new(
            std::fs::File::create(&gz).unwrap(),
            flate2::Compression::fast(),
        );
        enc.write_all(br#"{"x": [1, 2]}"#).unwrap();
        enc.finish().unwrap();
        let a: Value = read_json_file(&plain).unwrap();
        let b: Value = read_json_file(&gz).unwrap();
        assert_eq!(a, b);
        assert_eq!(a["x"][1], 2);
    }

    #[test]
    fn errors_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.json");
        let e = read_json_file::<Value>(&missing).unwrap_err();
        assert!(matches!(e, FormatError::Io { .. }));
        assert!(e.to_string().contains("missing.json"), "{e}");

        let truncated = dir.path().join("t.json");
        std::fs::write(&truncated, "[{\"a\": 1},\n {\"b\": ").unwrap();
        let e = read_json_file::<Value>(&truncated).unwrap_err();
        let s = e.to_string();
        assert!(s.contains("t.json") && s.contains("line 2"), "{s}");

        let bad_utf8 = dir.path().join("u.json");
        std::fs::write(&bad_utf8, b"[\"ok\xff\"]").unwrap();
        let e = read_text_file(&bad_utf8).unwrap_err();
        assert!(e.to_string().contains("offset 4"), "{e}");

        let bad_gz = dir.path().join("c.json.gz");
        std::fs::write(&bad_gz, [0x1f, 0x8b, 0, 1, 2]).unwrap();
        let e = read_json_file::<Value>(&bad_gz).unwrap_err();
        assert!(e.to_string().contains("c.json.gz"), "{e}");
    }

    #[test]
    fn hashes_files() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("abc.txt");
        std::fs::write(&p, "abc").unwrap();
        assert_eq!(
            sha256_file(&p).unwrap(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn array_elements_stream_and_stop_on_first_error() {
        let p = Path::new("x.json");
        let mut seen = Vec::new();
        for_each_array_element(p, "[1, 2, 3]", "numbers", |i, v| {
            seen.push((i, v));
            Ok(())
        })
        .unwrap();
        assert_eq!(seen.len(), 3);
        let e = for_each_array_element(p, "[1, 2, 3]", "numbers", |i, _| {
            if i == 1 {
                Err(FormatError::Json {
                    path: p.into(),
                    msg: "element 1".into(),
                })
            } else {
                Ok(())
            }
        })
        .unwrap_err();
        assert!(e.to_string().contains("element 1"));
        let e = for_each_array_element(p, "{\"a\": 1}", "numbers", |_, _| Ok(())).unwrap_err();
        assert!(e.to_string().contains("a JSON array of numbers"), "{e}");
        let e = for_each_array_element(p, "[1] x", "numbers", |_, _| Ok(())).unwrap_err();
        assert!(e.to_string().contains("trailing"), "{e}");
    }
}
