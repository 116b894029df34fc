//! Served replays (`NUMFUZZ_SERVE`, protocol in numfuzz-abi's `serve`): this process reads
//! replay requests on stdin and forks one child per input, which runs it as a standalone
//! replay would and dies; its stderr goes to a memory file whose text goes back to the
//! requester with its wait status. The server itself never runs the harness, so every child
//! starts from the state the program had after start-up, as a fresh process does.

use crate::region::Region;
use crate::{crash, report, standalone, taint, Harness};
use numfuzz_abi::serve::{self, Request};
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// Serves requests until stdin ends. Returns the exit code.
pub fn run(harness: &Harness) -> i32 {
    match serve_requests(harness) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("numfuzz target: serving replays: {e}");
            1
        }
    }
}

fn serve_requests(harness: &Harness) -> std::io::Result<()> {
    let output = memory_file()?;
    let null = std::fs::OpenOptions::new().read(true).write(true).open("/dev/null")?;
    warm_symbolizer();
    let mut requests = std::io::stdin().lock();
    let mut replies = std::io::stdout().lock();
    serve::write_u32(&mut replies, serve::HELLO)?;
    replies.flush()?;
    while let Some(request) = Request::read(&mut requests)? {
        if let Some(var) = request
            .vars
            .iter()
            .find(|(k, _)| !serve::PER_INPUT.contains(&k.as_str()))
        {
            return Err(std::io::Error::other(format!("`{}` cannot change per input", var.0)));
        }
        rewind(&output)?;
        // SAFETY: this process is single-threaded (it never ran the harness, which might start
        // threads), so the child may go on running Rust code.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(std::io::Error::last_os_error());
        }
        if pid == 0 {
            run_child(harness, &request, &output, &null);
        }
        serve::write_u32(&mut replies, pid as u32)?;
        replies.flush()?;
        let status = wait_for(pid)?;
        let text = read_all(&output)?;
        serve::write_u32(&mut replies, status as u32)?;
        serve::write_bytes(&mut replies, &text)?;
        replies.flush()?;
    }
    Ok(())
}

/// In the forked child: the request's variables, stdin and stdout on /dev/null, stderr into
/// `output`, then the input as a standalone replay runs it. Never returns.
fn run_child(harness: &Harness, request: &Request, output: &OwnedFd, null: &std::fs::File) -> ! {
    // SAFETY: replacing this process's standard descriptors with ones it owns; ending with
    // the server, which has nobody to report to once it is gone.
    unsafe {
        libc::dup2(null.as_raw_fd(), 0);
        libc::dup2(null.as_raw_fd(), 1);
        libc::dup2(output.as_raw_fd(), 2);
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong);
    }
    for (name, value) in &request.vars {
        // SAFETY: the child is single-threaded (see `serve_requests`).
        unsafe { std::env::set_var(name, value) };
    }
    // What a fresh process reads at start-up from these variables, read again.
    report::configure_from_env();
    if let Err(e) = taint::configure_from_env() {
        eprintln!("numfuzz target: {e}");
        std::process::exit(1);
    }
    crash::install();
    let region = Region::current().expect("region installed at start-up");
    standalone::run_input(harness, region, None, &request.input);
    std::process::exit(0)
}

/// A memory file for the children's stderr, closed on exec.
fn memory_file() -> std::io::Result<OwnedFd> {
    // SAFETY: memfd_create with a constant name; the descriptor is owned from here on.
    let fd = unsafe { libc::memfd_create(c"numfuzz-replay-stderr".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` is a new descriptor nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Empties `file` for the next child (whose writes share its offset).
fn rewind(file: &OwnedFd) -> std::io::Result<()> {
    // SAFETY: plain calls on a descriptor we own.
    let failed =
        unsafe { libc::ftruncate(file.as_raw_fd(), 0) != 0 || libc::lseek(file.as_raw_fd(), 0, libc::SEEK_SET) != 0 };
    if failed {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Everything the child wrote into `file`.
fn read_all(file: &OwnedFd) -> std::io::Result<Vec<u8>> {
    let mut text = Vec::new();
    let mut reader = std::fs::File::from(file.try_clone()?);
    std::io::Seek::seek(&mut reader, std::io::SeekFrom::Start(0))?;
    reader.read_to_end(&mut text)?;
    Ok(text)
}

fn wait_for(pid: libc::pid_t) -> std::io::Result<libc::c_int> {
    let mut status = 0;
    loop {
        // SAFETY: waiting for our own child.
        if unsafe { libc::waitpid(pid, &mut status, 0) } >= 0 {
            return Ok(status);
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Reads the program's debug information once, here: a child that prints a stack (an error
/// report's callers, a crash) finds it loaded instead of reading it again.
fn warm_symbolizer() {
    let mut frames = Vec::new();
    crash::symbolize(&mut frames, warm_symbolizer as *const () as usize, true);
}
