# Code run in a child R process, with the libraries of this one (where the
# package under test is installed), for what a test cannot change in its
# own process: the language of R's messages from the start, a file system
# with /proc hidden. env: environment variables, "NAME=value". hide_proc:
# run the child in a mount namespace of its own with an empty file system
# over /proc (unshare(1)); see proc_can_be_hidden(). prefix: a command and
# its arguments that run Rscript (taskset -c 0, say). Returns the lines the
# child wrote (stdout and stderr).
run_child_r <- function(code, env = character(), hide_proc = FALSE, timeout = 120,
                        prefix = character()) {
  rscript <- file.path(R.home("bin"), "Rscript")
  script <- tempfile(fileext = ".R")
  writeLines(code, script)
  on.exit(unlink(script))
  libs <- paste(.libPaths(), collapse = .Platform$path.sep)
  env <- c(paste0("R_LIBS=", shQuote(libs)), env)
  if (hide_proc) {
    command <- "unshare"
    args <- c("--map-root-user", "--mount", "sh", "-c",
              shQuote(paste("mount -t tmpfs none /proc && exec", shQuote(rscript),
                            "--vanilla", shQuote(script))))
  } else {
    command <- rscript
    args <- c("--vanilla", shQuote(script))
  }
  if (length(prefix)) {
    args <- c(prefix[-1], shQuote(command), args)
    command <- prefix[1]
  }
  suppressWarnings(system2(command, args, stdout = TRUE, stderr = TRUE, env = env,
                           timeout = timeout))
}

# Whether this system lets a child process see an empty /proc: Linux with
# unshare(1), and user namespaces (or root) to mount in.
proc_can_be_hidden <- function() {
  if (!identical(Sys.info()[["sysname"]], "Linux") || !nzchar(Sys.which("unshare")))
    return(FALSE)
  out <- tryCatch(suppressWarnings(system2("unshare", c(
    "--map-root-user", "--mount", "sh", "-c",
    shQuote("mount -t tmpfs none /proc && test ! -e /proc/meminfo && echo hidden")),
    stdout = TRUE, stderr = TRUE, timeout = 30)), error = function(e) character())
  identical(out, "hidden")
}

# Skips under emulation (scripts/arm64.sh sets FASTKPCA_EMULATED), where
# what takes a second natively takes minutes: the test runs natively, in
# R CMD check, and on real arm64 hardware. why: what is slow there.
# Future's workers are new R processes, each one's start-up seconds under
# qemu; their plans are R's plumbing (scripts/debian-future.sh runs them
# too), and the vector code they would run on arm64 runs in the tests
# around them.
skip_if_emulated <- function(why)
  skip_if(nzchar(Sys.getenv("FASTKPCA_EMULATED")),
          paste(why, "under emulation (tested natively)"))
