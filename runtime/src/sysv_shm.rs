//! System V shared memory handed over by a fuzzer through an id in the environment (AFL++'s
//! `__AFL_SHM_ID`, `__AFL_SHM_FUZZ_ID`, numfuzz's `NUMFUZZ_SHM_ID`).

/// One attached segment. Never detached: it lives as long as the process.
#[derive(Clone, Copy)]
pub struct Segment {
    pub ptr: *mut u8,
    /// The segment's real size (`shm_segsz`), which bounds every access whatever sizes the
    /// fuzzer announces elsewhere.
    pub len: usize,
}

/// Attaches the segment whose id is the value of environment variable `var`.
pub fn attach(var: &str, read_only: bool) -> Result<Segment, String> {
    let text = std::env::var(var).map_err(|_| format!("{var} is not set"))?;
    let id: libc::c_int = text
        .trim()
        .parse()
        .map_err(|_| format!("{var}=`{text}` is not a System V shared-memory id"))?;
    // SAFETY: IPC_STAT fills a plain-data struct we own.
    let len = unsafe {
        let mut ds: libc::shmid_ds = std::mem::zeroed();
        if libc::shmctl(id, libc::IPC_STAT, &mut ds) != 0 {
            return Err(format!(
                "cannot inspect shared memory {var}={id}: {}",
                std::io::Error::last_os_error()
            ));
        }
        ds.shm_segsz
    };
    let flags = if read_only { libc::SHM_RDONLY } else { 0 };
    // SAFETY: attaching an existing segment at an address the kernel picks.
    let ptr = unsafe { libc::shmat(id, std::ptr::null(), flags) };
    if ptr as isize == -1 || ptr.is_null() {
        return Err(format!(
            "cannot attach shared memory {var}={id}: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(Segment { ptr: ptr.cast(), len })
}
