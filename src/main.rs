//! The `aidlc` binary: parse arguments, run, map the result to an exit code (D9).

#[expect(
    clippy::print_stderr,
    reason = "the panic hook is the one writer besides the printer: a panic may have happened inside it"
)]
fn main() {
    std::panic::set_hook(Box::new(|info| {
        eprintln!(
            "error: internal error in aidlc {}: {info}",
            env!("CARGO_PKG_VERSION")
        );
        eprintln!(
            "  this is a bug; please report it with the command you ran and the output above"
        );
        std::process::exit(101);
    }));
    let cli = match aidlc::cli::parse_arguments() {
        Ok(cli) => cli,
        Err(status) => std::process::exit(status.code()),
    };
    let status = aidlc::cli::run(cli);
    std::process::exit(status.code());
}
