//! Stopping: SIGTERM runs the graceful shutdown whenever it comes.
use crate::helpers::TestApp;

/// A supervisor (or a test) learns the server is up when it prints its
/// address, and may stop it at once. That SIGTERM must run the shutdown
/// (exit 0): it once killed the server outright when it came before the
/// server listened for it, and was lost, leaving the server running, when
/// it came just as listening began.
#[test]
fn a_sigterm_the_moment_the_address_is_printed_stops_the_server_gracefully() {
    for round in 1..=8 {
        let tmp = tempfile::tempdir().unwrap();
        let mut app = TestApp::spawn_on(tmp.path(), &[]);
        app.terminate();
        let status = app.wait();
        assert!(status.success(), "round {round}: the server ended with {status}");
    }
}
