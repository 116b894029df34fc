//! The campaign screen on a terminal. LibAFL calls `display` on every event; a thread of its
//! own redraws four times a second from the latest snapshot and reads the keys.
//!
//! The terminal is handled by crossterm: raw mode (no echo, no line editing, keys read one by
//! one) on an alternate screen without a cursor. Raw mode also turns off the terminal's
//! signals, so Ctrl-C arrives as a key, and the screen sends the SIGINT the terminal would
//! have sent to the terminal's foreground process group; `q` sends the same. Ctrl-C thus
//! reaches the campaign's processes as it does without a screen (the clients stop cleanly and
//! write their stats, the broker ignores it and waits for them). The alternate screen is left,
//! and the terminal's settings restored, when the monitor is dropped at the end of the
//! campaign (so the summary prints on the ordinary screen) and as soon as the screen fails
//! (then the terminal's own Ctrl-C is back).

use super::draw::draw;
use super::snapshot::{Snapshot, Tracker};
use libafl::monitors::stats::ClientStatsManager;
use libafl::monitors::Monitor;
use libafl::Error;
use libafl_bolts::ClientId;
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::cursor::{Hide, Show};
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
use ratatui::crossterm::execute;
use ratatui::crossterm::terminal::{self, EnterAlternateScreen, LeaveAlternateScreen};
use ratatui::Terminal;
use std::os::fd::AsRawFd;
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
        read_keys_until(Instant::now() + REDRAW)?;
    }
    Ok(())
}

/// Reads the keys typed until `deadline` (or until the terminal is resized, to redraw at
/// once); `q` and Ctrl-C interrupt the foreground.
fn read_keys_until(deadline: Instant) -> std::io::Result<()> {
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        if !event::poll(left)? {
            break;
        }
        match event::read()? {
            Event::Key(key) if key.kind != KeyEventKind::Release => {
                let control = key.modifiers.contains(KeyModifiers::CONTROL);
                match key.code {
                    KeyCode::Char('q' | 'Q') if !control => interrupt_foreground(),
                    KeyCode::Char('c' | 'C') if control => interrupt_foreground(),
                    _ => {}
                }
            }
            Event::Resize(..) => break,
            _ => {}
        }
    }
    Ok(())
}

/// What Ctrl-C does: SIGINT to the terminal's foreground process group (to this process's
/// own group when the terminal does not tell it, so that Ctrl-C is never lost).
fn interrupt_foreground() {
    // The keys come from stdin when it is a terminal, else from /dev/tty (as crossterm reads).
    let tty = std::fs::File::open("/dev/tty");
    let fd = tty.as_ref().map_or(libc::STDIN_FILENO, |f| f.as_raw_fd());
    // SAFETY: plain libc calls on an open file descriptor and a process group id.
    unsafe {
        let group = libc::tcgetpgrp(fd);
        libc::kill(if group > 0 { -group } else { 0 }, libc::SIGINT);
    }
}

/// The terminal as the screen wants it (raw mode, alternate screen, no cursor), restored
/// when dropped.
///
/// crossterm has one mode besides the terminal's own: raw, which also turns off the signal
/// keys (ISIG). Keeping them on would take termios by hand again, so the screen reads Ctrl-C
/// as a key and sends its SIGINT itself (`read_keys_until`); when the screen stops, the mode
/// is dropped and the terminal sends it again.
struct TerminalMode;

impl TerminalMode {
    fn enter() -> TerminalMode {
        // Without raw mode (no terminal settings to change) the screen still shows, and the
        // terminal's own Ctrl-C stays on.
        let _ = terminal::enable_raw_mode();
        let _ = execute!(std::io::stdout(), EnterAlternateScreen, Hide);
        TerminalMode
    }
}

impl Drop for TerminalMode {
    fn drop(&mut self) {
        let _ = execute!(std::io::stdout(), Show, LeaveAlternateScreen);
        // Restores the settings enable_raw_mode saved (nothing when it did not enable it).
        let _ = terminal::disable_raw_mode();
    }
}
