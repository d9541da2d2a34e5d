#![allow(dead_code)]
use cairn_embed::DEFAULT_MODEL;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::PathBuf;

/// Serves `GET /<hub id>/resolve/main/<file>` from `dir`; 404 for anything else.
pub fn serve(dir: PathBuf, requests: usize) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(requests) {
            let Ok(mut stream) = stream else { continue };
            let mut line = String::new();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            reader.read_line(&mut line).unwrap();
            // Drain the headers.
            let mut h = String::new();
            while reader.read_line(&mut h).is_ok_and(|n| n > 2) {
                h.clear();
            }
            let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
            let prefix = format!("/{DEFAULT_MODEL}/resolve/main/");
            let body = path
                .strip_prefix(&prefix)
                .and_then(|f| std::fs::read(dir.join(f)).ok());
            match body {
                Some(b) => {
                    write!(
                        stream,
                        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                        b.len()
                    )
                    .unwrap();
                    stream.write_all(&b).unwrap();
                }
                None => {
                    stream.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n").unwrap();
                }
            }
        }
    });
    format!("http://{addr}")
}
