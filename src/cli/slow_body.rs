//! A request body must keep arriving: the header timeout ends with the
//! headers, so a client could otherwise send a body a byte at a time and
//! hold its connection (and its share of the cap) for as long as the body
//! limit allows. From the first time it has to be waited for, a body gets
//! a grace period plus one second per `bytes_per_sec` it has sent; by then
//! it must have ended, or reading it fails (the handler answers 400 and the
//! connection closes).
use hyper::body::{Body, Bytes, Frame, SizeHint};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::time::{Instant, Sleep};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyRate {
    /// Time any body gets, however small.
    pub grace: Duration,
    /// Bytes a second a body must average once past the grace.
    pub bytes_per_sec: u64,
}

impl BodyRate {
    /// 10 s and 1 KiB/s, unless `HARDNEG_BODY_GRACE_SECS` or
    /// `HARDNEG_MIN_BODY_BYTES_PER_SEC` say otherwise (docs/security.md).
    pub fn from_env() -> BodyRate {
        let env = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok()).filter(|&n| n > 0);
        BodyRate {
            grace: Duration::from_secs(env("HARDNEG_BODY_GRACE_SECS").unwrap_or(10)),
            bytes_per_sec: env("HARDNEG_MIN_BODY_BYTES_PER_SEC").unwrap_or(1024),
        }
    }
}

/// `inner`, failing once it falls behind its [`BodyRate`].
pub struct RateLimited<B> {
    inner: B,
    rate: BodyRate,
    received: u64,
    /// Set only once the body has to be waited for: most bodies come with
    /// their headers and never read the clock or arm a timer.
    waiting: Option<Waiting>,
}

struct Waiting {
    since: Instant,
    deadline: Pin<Box<Sleep>>,
}

#[derive(Debug)]
struct TooSlow;

impl std::fmt::Display for TooSlow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the request body arrived too slowly")
    }
}

impl std::error::Error for TooSlow {}

impl<B> RateLimited<B> {
    pub fn new(inner: B, rate: BodyRate) -> RateLimited<B> {
        RateLimited { inner, rate, received: 0, waiting: None }
    }
}

impl BodyRate {
    /// When a body waited for since `since` must have ended, having sent `received` bytes.
    fn due(&self, since: Instant, received: u64) -> Instant {
        since + self.grace + Duration::from_secs_f64(received as f64 / self.bytes_per_sec as f64)
    }
}

fn cut_off(received: u64) -> Poll<Option<Result<Frame<Bytes>, axum::BoxError>>> {
    tracing::info!(received, "a request body arrived too slowly: cut off");
    Poll::Ready(Some(Err(TooSlow.into())))
}

impl<B> Body for RateLimited<B>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: Into<axum::BoxError>,
{
    type Data = Bytes;
    type Error = axum::BoxError;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                this.received += frame.data_ref().map_or(0, |d| d.len() as u64);
                if let Some(w) = this.waiting.as_mut() {
                    let due = this.rate.due(w.since, this.received);
                    if Instant::now() > due {
                        return cut_off(this.received);
                    }
                    w.deadline.as_mut().reset(due);
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(other) => Poll::Ready(other.map(|r| r.map_err(Into::into))),
            Poll::Pending => {
                let (rate, received) = (this.rate, this.received);
                let w = this.waiting.get_or_insert_with(|| {
                    let since = Instant::now();
                    Waiting { since, deadline: Box::pin(tokio::time::sleep_until(rate.due(since, received))) }
                });
                match w.deadline.as_mut().poll(cx) {
                    Poll::Ready(()) => cut_off(received),
                    Poll::Pending => Poll::Pending,
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `left` one-byte frames, one every `every`.
    struct Trickle {
        left: usize,
        every: Duration,
        next: Pin<Box<Sleep>>,
    }

    impl Body for Trickle {
        type Data = Bytes;
        type Error = std::convert::Infallible;

        fn poll_frame(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
            if self.left == 0 {
                return Poll::Ready(None);
            }
            std::task::ready!(self.next.as_mut().poll(cx));
            self.left -= 1;
            let next = Instant::now() + self.every;
            self.next.as_mut().reset(next);
            Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(b"x")))))
        }
    }

    /// Reads a body of `bytes` one-byte frames, one every `every` ms: its length, or the error.
    async fn read(bytes: usize, every: u64) -> Result<usize, String> {
        let every = Duration::from_millis(every);
        let trickle = Trickle { left: bytes, every, next: Box::pin(tokio::time::sleep(every)) };
        let mut body = RateLimited::new(trickle, BodyRate { grace: Duration::from_millis(300), bytes_per_sec: 100 });
        let mut len = 0;
        while let Some(frame) = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await {
            len += frame.map_err(|e| e.to_string())?.data_ref().map_or(0, |d| d.len());
        }
        Ok(len)
    }

    #[tokio::test]
    async fn a_body_that_keeps_its_rate_arrives_whole_and_a_trickle_is_cut_off() {
        assert_eq!(read(20, 5).await, Ok(20), "at 200 bytes a second");
        assert_eq!(read(2, 80).await, Ok(2), "slow, but within the grace");
        let start = Instant::now();
        assert_eq!(read(100, 50).await, Err("the request body arrived too slowly".into()));
        assert!(start.elapsed() < Duration::from_millis(900), "cut off soon after the grace: {:?}", start.elapsed());
        let start = Instant::now();
        assert!(read(1, 3_600_000).await.is_err(), "nothing sent at all");
        assert!(start.elapsed() < Duration::from_millis(900), "cut off at the grace: {:?}", start.elapsed());
    }
}
