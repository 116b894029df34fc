//! Register-preserving entry points of the f32/f64 checkers and the comparison hooks (x86-64),
//! for the slow path of the checks the pass inlines and for the hooks it calls when the
//! comparison mode is on.
//!
//! The pass calls them from an inline `asm` that tests the fast path's verdict and calls only
//! when the result was not strictly normal. That keeps the slow path out of the function's
//! control flow: SanitizerCoverage, which runs after the pass, then puts no guard on the hot
//! path (it splits and instruments every new critical edge), and the program's values stay in
//! their registers because the call clobbers almost none (the asm declares rflags, the ErrBits
//! slots it may lower, and r10/r11, which a call through the PLT may lose to the dynamic
//! linker's lazy resolver). The thunk saves what the SysV ABI lets a callee clobber (rax, rcx, rdx,
//! rsi, rdi, r8-r11 and xmm0-15), aligns the stack, which an inline asm cannot promise, and
//! calls the checker with the arguments the asm put in their ABI registers. The upper halves of
//! ymm registers are not saved: the pass uses this path only in functions without AVX.

#[cfg(target_arch = "x86_64")]
macro_rules! preserving_entry {
    ($name:literal, $check:path) => {
        std::arch::global_asm!(
            ".text",
            concat!(".globl ", $name),
            concat!(".type ", $name, ",@function"),
            ".p2align 4",
            concat!($name, ":"),
            ".cfi_startproc",
            "push rbp",
            ".cfi_def_cfa_offset 16",
            ".cfi_offset rbp, -16",
            "mov rbp, rsp",
            ".cfi_def_cfa_register rbp",
            "and rsp, -16",
            "sub rsp, 336",
            "movdqa [rsp + 0], xmm0",
            "movdqa [rsp + 16], xmm1",
            "movdqa [rsp + 32], xmm2",
            "movdqa [rsp + 48], xmm3",
            "movdqa [rsp + 64], xmm4",
            "movdqa [rsp + 80], xmm5",
            "movdqa [rsp + 96], xmm6",
            "movdqa [rsp + 112], xmm7",
            "movdqa [rsp + 128], xmm8",
            "movdqa [rsp + 144], xmm9",
            "movdqa [rsp + 160], xmm10",
            "movdqa [rsp + 176], xmm11",
            "movdqa [rsp + 192], xmm12",
            "movdqa [rsp + 208], xmm13",
            "movdqa [rsp + 224], xmm14",
            "movdqa [rsp + 240], xmm15",
            "mov [rsp + 256], rax",
            "mov [rsp + 264], rcx",
            "mov [rsp + 272], rdx",
            "mov [rsp + 280], rsi",
            "mov [rsp + 288], rdi",
            "mov [rsp + 296], r8",
            "mov [rsp + 304], r9",
            "mov [rsp + 312], r10",
            "mov [rsp + 320], r11",
            "call {check}",
            "movdqa xmm0, [rsp + 0]",
            "movdqa xmm1, [rsp + 16]",
            "movdqa xmm2, [rsp + 32]",
            "movdqa xmm3, [rsp + 48]",
            "movdqa xmm4, [rsp + 64]",
            "movdqa xmm5, [rsp + 80]",
            "movdqa xmm6, [rsp + 96]",
            "movdqa xmm7, [rsp + 112]",
            "movdqa xmm8, [rsp + 128]",
            "movdqa xmm9, [rsp + 144]",
            "movdqa xmm10, [rsp + 160]",
            "movdqa xmm11, [rsp + 176]",
            "movdqa xmm12, [rsp + 192]",
            "movdqa xmm13, [rsp + 208]",
            "movdqa xmm14, [rsp + 224]",
            "movdqa xmm15, [rsp + 240]",
            "mov rax, [rsp + 256]",
            "mov rcx, [rsp + 264]",
            "mov rdx, [rsp + 272]",
            "mov rsi, [rsp + 280]",
            "mov rdi, [rsp + 288]",
            "mov r8, [rsp + 296]",
            "mov r9, [rsp + 304]",
            "mov r10, [rsp + 312]",
            "mov r11, [rsp + 320]",
            "mov rsp, rbp",
            ".cfi_def_cfa_register rsp",
            "pop rbp",
            ".cfi_def_cfa_offset 8",
            "ret",
            ".cfi_endproc",
            concat!(".size ", $name, ", . - ", $name),
            check = sym $check,
        );
    };
}

#[cfg(target_arch = "x86_64")]
preserving_entry!("__numfuzz_check_f32_preserving", crate::__numfuzz_check_f32);
#[cfg(target_arch = "x86_64")]
preserving_entry!("__numfuzz_check_f64_preserving", crate::__numfuzz_check_f64);
#[cfg(target_arch = "x86_64")]
preserving_entry!("__numfuzz_cmp_int_preserving", crate::cmp::__numfuzz_cmp_int);
#[cfg(target_arch = "x86_64")]
preserving_entry!("__numfuzz_cmp_f32_preserving", crate::cmp::__numfuzz_cmp_f32);
#[cfg(target_arch = "x86_64")]
preserving_entry!("__numfuzz_cmp_f64_preserving", crate::cmp::__numfuzz_cmp_f64);
