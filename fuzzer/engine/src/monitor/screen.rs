//! The campaign screen on a terminal. LibAFL calls `display` on every event; a thread of its
//! own redraws four times a second from the latest snapshot and reads `q`.
//!
//! The terminal is not put in raw mode: echo and line editing are off, but signals stay on, so
//! Ctrl-C reaches the campaign's processes as it does without a screen (the clients stop
//! cleanly and write their stats, the broker ignores it and waits for them), and `q` sends the
//! same SIGINT to the terminal's foreground process group. The screen is an alternate screen
//! that is left, and the terminal's settings restored, when the monitor is dropped at the end
//! of the campaign, so the summary prints on the ordinary screen.

use super::draw::draw;
use super::snapshot::{Snapshot, Tracker};
use libafl::monitors::stats::ClientStatsManager;
use libafl::monitors::Monitor;
use libafl::Error;
use libafl_bolts::ClientId;
use ratatui::backend::CrosstermBackend;
use ratatui::Terminal;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const REDRAW: Duration = Duration::from_millis(250);

/// The latest snapshot and when it was taken (the screen ages it between events).
type Shared = Arc<Mutex<(Snapshot, Instant)>>;

pub struct ScreenMonitor {
    title: String,
    tracker: Tracker,
    shared: Shared,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl ScreenMonitor {
    /// `title`: what the campaign fuzzes (the target's name); `budget`: `-V` seconds.
    pub fn new(title: String, budget: Option<u64>) -> ScreenMonitor {
        ScreenMonitor {
            title,
            tracker: Tracker::new(budget),
            shared: Arc::new(Mutex::new((Snapshot::default(), Instant::now()))),
            stop: Arc::new(AtomicBool::new(false)),
            thread: None,
        }
    }

    fn start(&mut self) {
        let (shared, stop, title) = (self.shared.clone(), self.stop.clone(), self.title.clone());
        self.thread = Some(std::thread::spawn(move || {
            let mode = TerminalMode::enter();
            if let Err(e) = redraw_until(&shared, &stop, &title) {
                drop(mode);
                eprintln!("numfuzz: the campaign screen stopped ({e}); the campaign goes on");
            }
        }));
    }
}

impl Monitor for ScreenMonitor {
    fn display(&mut self, stats: &mut ClientStatsManager, _event: &str, sender: ClientId) -> Result<(), Error> {
        let snapshot = self.tracker.update(stats, sender);
        *self.shared.lock().unwrap_or_else(|e| e.into_inner()) = (snapshot, Instant::now());
        if self.thread.is_none() {
            self.start();
        }
        Ok(())
    }
}

impl Drop for ScreenMonitor {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn redraw_until(shared: &Shared, stop: &AtomicBool, title: &str) -> std::io::Result<()> {
    let mut terminal = Terminal::new(CrosstermBackend::new(std::io::stdout()))?;
    terminal.clear()?;
    while !stop.load(Ordering::Relaxed) {
        let snapshot = {
            let (s, taken) = &*shared.lock().unwrap_or_else(|e| e.into_inner());
            s.aged(taken.elapsed())
        };
        terminal.draw(|f| draw(f, f.area(), title, &snapshot))?;
        if key_pressed(b'q') {
            interrupt_foreground();
        }
        std::thread::sleep(REDRAW);
    }
    Ok(())
}

/// Whether `key` is among the bytes typed since the last look (stdin never blocks: VMIN 0).
fn key_pressed(key: u8) -> bool {
    let mut buf = [0u8; 64];
    // SAFETY: reading into a local buffer of its own length.
    let n = unsafe { libc::read(libc::STDIN_FILENO, buf.as_mut_ptr().cast(), buf.len()) };
    n > 0 && buf[..n as usize].iter().any(|b| b.eq_ignore_ascii_case(&key))
}

/// What Ctrl-C does: SIGINT to the terminal's foreground process group.
fn interrupt_foreground() {
    // SAFETY: plain libc calls on the terminal's file descriptor and a process group id.
    unsafe {
        let group = libc::tcgetpgrp(libc::STDIN_FILENO);
        if group > 0 {
            libc::kill(-group, libc::SIGINT);
        }
    }
}

/// The terminal as the screen wants it (alternate screen, no cursor, no echo, no line
/// editing, signals on), restored when dropped.
struct TerminalMode {
    saved: Option<libc::termios>,
}

impl TerminalMode {
    fn enter() -> TerminalMode {
        // SAFETY: termios is plain data; tcgetattr fills it or fails.
        let mut t: libc::termios = unsafe { std::mem::zeroed() };
        let saved = (unsafe { libc::tcgetattr(libc::STDIN_FILENO, &mut t) } == 0).then_some(t);
        if saved.is_some() {
            t.c_lflag &= !(libc::ICANON | libc::ECHO);
            t.c_lflag |= libc::ISIG;
            t.c_cc[libc::VMIN] = 0;
            t.c_cc[libc::VTIME] = 0;
            // SAFETY: applying settings read from the same descriptor, changed above.
            unsafe { libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, &t) };
        }
        let mut out = std::io::stdout();
        let _ = out.write_all(b"\x1b[?1049h\x1b[?25l");
        let _ = out.flush();
        TerminalMode { saved }
    }
}

impl Drop for TerminalMode {
    fn drop(&mut self) {
        let mut out = std::io::stdout();
        let _ = out.write_all(b"\x1b[?25h\x1b[?1049l");
        let _ = out.flush();
        if let Some(t) = &self.saved {
            // SAFETY: restoring the settings tcgetattr returned.
            unsafe { libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, t) };
        }
    }
}
