//! SIGINT, SIGTERM and SIGHUP end the command line with status 2 and one line on stderr, as any other
//! failure does, and never leave a temporary file: while nothing of the run is on disk the handler
//! ends the process at once; while outputs are being written it leaves a note for the writer, which
//! undoes its work (`files.rs`). A second signal of the same kind ends the process the default way.
//!
//! SIGXFSZ is ignored, so that a file size limit (`ulimit -f`) makes a write fail with an error the
//! writer handles, instead of killing the process with its temporary files on disk.

#[cfg(unix)]
mod unix {
    use std::io::IsTerminal;
    use std::sync::atomic::{AtomicBool, Ordering};

    use crate::files::{EXITING, IDLE, PHASE, SIGNAL, WRITING};

    /// Whether stderr is a terminal, where a progress bar may be on the line the message goes to.
    static TERMINAL: AtomicBool = AtomicBool::new(false);

    extern "C" fn on_signal(signal: libc::c_int) {
        match PHASE.compare_exchange(IDLE, EXITING, Ordering::SeqCst, Ordering::SeqCst) {
            Ok(_) => {
                let message: &[u8] = match signal {
                    libc::SIGINT => b"error: interrupted by SIGINT; no output written\n",
                    libc::SIGTERM => b"error: interrupted by SIGTERM; no output written\n",
                    _ => b"error: interrupted by SIGHUP; no output written\n",
                };
                let clear: &[u8] = if TERMINAL.load(Ordering::Relaxed) {
                    b"\r\x1b[2K"
                } else {
                    b""
                };
                // SAFETY: `write` and `_exit` are async-signal-safe; the buffers are static.
                unsafe {
                    libc::write(2, clear.as_ptr().cast(), clear.len());
                    libc::write(2, message.as_ptr().cast(), message.len());
                    libc::_exit(2);
                }
            }
            Err(WRITING) => SIGNAL.store(signal, Ordering::SeqCst),
            // The renames have begun, or another handler is ending the process.
            Err(_) => {}
        }
    }

    pub(crate) fn install() {
        TERMINAL.store(std::io::stderr().is_terminal(), Ordering::Relaxed);
        // SAFETY: `sigaction` gets a zeroed (valid) struct with a handler of the right signature, whose
        // body only touches atomics and async-signal-safe calls; SIG_IGN for SIGXFSZ has no handler.
        unsafe {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            // The handler runs once: a second signal of the kind takes the default action.
            action.sa_flags = libc::SA_RESETHAND;
            libc::sigemptyset(&mut action.sa_mask);
            for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
                libc::sigaction(signal, &action, std::ptr::null_mut());
            }
        }
    }
}

/// Installs the handlers (a no-op where there are no POSIX signals).
pub(crate) fn install() {
    #[cfg(unix)]
    unix::install();
}
