//! An external scorer process speaking `protocol.rs` over stdin/stdout.
//! Its stderr is passed through, so its own logs reach the user.
use super::encoder::{CacheIdentity, Encoder, ImageRef};
use super::protocol::{
    parse_hello, parse_response, parse_text_scores, Embeddings, Hello, ImageItem, Request, WANT_TEXT_SCORES,
};
use anyhow::Context;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

pub struct ExternalScorer {
    command: String,
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    hello: Hello,
    next_id: u64,
}

impl ExternalScorer {
    /// Runs `command` with `sh -c` and waits for its hello line. A scorer is
    /// often someone else's model code: it gets hardneg's environment but
    /// for its secrets (the Prolific token and webhook secret, and the
    /// database URL, which may hold a password) and the paths to them.
    pub fn spawn(command: &str) -> anyhow::Result<ExternalScorer> {
        let secrets = std::env::vars_os().map(|(name, _)| name).filter(|name| {
            name.to_str().is_some_and(|n| n.starts_with("HARDNEG_PROLIFIC_") || n == "HARDNEG_DATABASE")
        });
        let mut child = Command::new("sh");
        for name in secrets {
            child.env_remove(name);
        }
        let mut child = child
            .arg("-c")
            .arg(command)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .with_context(|| format!("starting scorer {command:?}"))?;
        let stdin = child.stdin.take();
        let mut stdout = BufReader::new(child.stdout.take().expect("piped"));
        let line = read_line(&mut stdout).with_context(|| format!("scorer {command:?}: no hello line"))?;
        let hello = parse_hello(&line).with_context(|| format!("scorer {command:?}"))?;
        Ok(ExternalScorer { command: command.to_string(), child, stdin, stdout, hello, next_id: 1 })
    }

    pub fn hello(&self) -> &Hello {
        &self.hello
    }

    fn request(&mut self, images: &[ImageRef], texts: &[String]) -> anyhow::Result<Embeddings> {
        let items = images.iter().map(|r| ImageItem { hash: &r.hash, path: r.path.display().to_string() }).collect();
        let (id, answer) = self.exchange(Request { id: 0, images: items, texts, want: None })?;
        parse_response(&answer, id, images.len(), texts.len())
    }

    /// One plausibility score per text (the blind audit; higher: more plausible).
    pub fn score_texts(&mut self, texts: &[String]) -> anyhow::Result<Vec<f64>> {
        let (id, answer) = self.exchange(Request { id: 0, images: Vec::new(), texts, want: Some(WANT_TEXT_SCORES) })?;
        parse_text_scores(&answer, id, texts.len())
    }

    /// Sends `req` under the next id; returns the id and the answer line.
    fn exchange(&mut self, mut req: Request<'_>) -> anyhow::Result<(u64, String)> {
        let id = self.next_id;
        self.next_id += 1;
        req.id = id;
        let mut line = serde_json::to_string(&req)?;
        line.push('\n');
        let stdin = self.stdin.as_mut().expect("open until drop");
        stdin
            .write_all(line.as_bytes())
            .and_then(|_| stdin.flush())
            .with_context(|| format!("scorer {:?} stopped reading", self.command))?;
        let answer = read_line(&mut self.stdout).with_context(|| format!("scorer {:?}, request {id}", self.command))?;
        Ok((id, answer))
    }
}

fn read_line(r: &mut impl BufRead) -> anyhow::Result<String> {
    let mut line = String::new();
    anyhow::ensure!(r.read_line(&mut line)? > 0, "the scorer closed its output (exited?)");
    Ok(line)
}

impl Encoder for ExternalScorer {
    fn identity(&self) -> Option<CacheIdentity> {
        let weights = self.hello.fingerprint.clone()?;
        let preprocess = format!("external:{}", self.hello.preprocess.as_deref().unwrap_or(""));
        Some(CacheIdentity { weights, preprocess })
    }

    fn device(&self) -> String {
        self.hello.device.clone().unwrap_or_else(|| "external".to_string())
    }

    fn source(&self) -> String {
        format!("external: {} ({})", self.command, self.hello.model)
    }

    fn encode_images(&mut self, images: &[ImageRef]) -> anyhow::Result<Vec<Vec<f32>>> {
        Ok(self.request(images, &[])?.0)
    }

    fn encode_texts(&mut self, texts: &[String]) -> anyhow::Result<Vec<Vec<f32>>> {
        Ok(self.request(&[], texts)?.1)
    }
}

impl Drop for ExternalScorer {
    /// Closing stdin asks the scorer to exit; one that does not is killed.
    fn drop(&mut self) {
        drop(self.stdin.take());
        for _ in 0..50 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
