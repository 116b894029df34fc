//! The campaign screen in a real terminal: `numfuzz run` under tmux shows the exception
//! counts and the escaping site, and one Ctrl-C ends the campaign with its summary.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};
use testkit::{compile, Tools};

/// `x * 1e300` overflows unreported for any |x| above 1.8e8: the fuzzer finds it at once.
const TARGET: &str = r#"#include <numfuzz.h>
NUMFUZZ_SIGNATURE("f64");
static double scaled(double x) { return x * 1e300; }
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  NUMFUZZ_RESULT(scaled(nf_f64(data, size, 0)));
  return 0;
}
"#;

/// A tmux server of this test's own (its socket in the test's directory).
struct Tmux {
    socket: String,
}

impl Tmux {
    fn cmd(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .args(["-S", &self.socket])
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("tmux is missing ({e}): run scripts/setup.sh"))
    }

    fn pane(&self) -> String {
        String::from_utf8_lossy(&self.cmd(&["capture-pane", "-p", "-t", "screen"]).stdout).into_owned()
    }

    /// Waits for `ready` to hold on the pane; panics with the pane after `limit`.
    fn wait_for(&self, limit: Duration, what: &str, ready: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let pane = self.pane();
            if ready(&pane) {
                return pane;
            }
            assert!(
                start.elapsed() < limit,
                "no {what} on the screen after {limit:?}:\n{pane}"
            );
            std::thread::sleep(Duration::from_millis(250));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd(&["kill-server"]);
    }
}

fn shell_quote(p: &Path) -> String {
    format!("'{}'", p.display().to_string().replace('\'', r"'\''"))
}

/// Starts `numfuzz run -V 300` on the target in a tmux pane of 80x24; returns the server and
/// the file the exit status goes to.
fn start(built: &testkit::Built) -> (Tmux, std::path::PathBuf) {
    let status = built.path("status");
    // As a person's terminal: `CI` (set by CI runners, inherited by tmux) turns the screen off.
    // The terminal's settings before and after the run (`stty -g`), to compare.
    let command = format!(
        "stty -g > {before}; env -u CI {} run -o {} -V 300 -- {}; code=$?; stty -g > {after}; \
         echo $code > {}; sleep 60",
        shell_quote(&Tools::get().numfuzz()),
        shell_quote(&built.path("out")),
        shell_quote(&built.exe),
        shell_quote(&status),
        before = shell_quote(&built.path("stty.before")),
        after = shell_quote(&built.path("stty.after")),
    );
    let tmux = Tmux {
        socket: built.path("tmux.sock").display().to_string(),
    };
    let started = tmux.cmd(&["new-session", "-d", "-s", "screen", "-x", "80", "-y", "24", &command]);
    assert!(started.status.success(), "{}", String::from_utf8_lossy(&started.stderr));
    (tmux, status)
}

/// The terminal's settings are as they were before the campaign (echo, line editing, signals).
fn assert_terminal_restored(built: &testkit::Built) {
    let before = std::fs::read_to_string(built.path("stty.before")).unwrap();
    let after = std::fs::read_to_string(built.path("stty.after")).unwrap();
    assert!(!before.trim().is_empty());
    assert_eq!(before, after, "the terminal's settings were not restored");
}

/// The exit status once `numfuzz run` has ended (at most a minute after being asked to stop).
fn exit_status(tmux: &Tmux, status: &Path) -> String {
    let start = Instant::now();
    // The shell creates the file before it writes the code into it.
    while std::fs::read_to_string(status).map_or(true, |s| s.trim().is_empty()) {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "numfuzz run did not stop:\n{}",
            tmux.pane()
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    std::fs::read_to_string(status).unwrap().trim().to_string()
}

#[test]
fn the_screen_shows_exceptions_and_the_escape_and_one_ctrl_c_stops_the_campaign() {
    let built = compile("scaled", &[("scaled.c", TARGET)], &["-O1"], &[]);
    let (tmux, status) = start(&built);
    let screen = tmux.wait_for(Duration::from_secs(60), "escaping overflow", |p| {
        p.contains("escaping 1") && p.contains("scaled.c:3:")
    });
    assert!(screen.contains("numfuzz scaled"), "{screen}");
    assert!(screen.contains("Overflow 1  new"), "{screen}");
    assert!(
        screen.contains("Overflow scaled.c:3:"),
        "the newest escaping site:\n{screen}"
    );
    assert!(screen.contains("q or Ctrl-C: stop"), "{screen}");
    for line in screen.lines() {
        assert!(line.chars().count() <= 80, "cut or wrapped: {line}");
    }
    assert_eq!(screen.matches("IEEE-754 exceptions").count(), 1, "{screen}");

    tmux.cmd(&["send-keys", "-t", "screen", "C-c"]);
    let code = exit_status(&tmux, &status);
    // The summary on the ordinary screen, and the exit code of a campaign cut short.
    assert_eq!(code, "1", "{}", tmux.pane());
    let pane = tmux.pane();
    assert!(pane.contains("stopped by a signal"), "{pane}");
    assert!(pane.contains("Overflow"), "{pane}");
    assert!(!pane.contains("q or Ctrl-C: stop"), "the screen was left: {pane}");
    assert_terminal_restored(&built);
    assert!(built.path("out/default/crashes").is_dir(), "findings are kept");
}

#[test]
fn q_stops_the_campaign_as_ctrl_c_does() {
    let built = compile("scaled", &[("scaled.c", TARGET)], &["-O1"], &[]);
    let (tmux, status) = start(&built);
    tmux.wait_for(Duration::from_secs(60), "screen", |p| p.contains("escaping 1"));
    tmux.cmd(&["send-keys", "-t", "screen", "q"]);
    assert_eq!(exit_status(&tmux, &status), "1", "{}", tmux.pane());
    let pane = tmux.pane();
    assert!(pane.contains("stopped by a signal"), "{pane}");
    assert!(!pane.contains("q or Ctrl-C: stop"), "the screen was left: {pane}");
    assert_terminal_restored(&built);
}
