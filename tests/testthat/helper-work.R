# Long work stops soon after an interrupt: the tests count the work done
# after one in the units the code itself counts (blocks of rows,
# landmarks, bands of tiles, chunks, the reports of an exact fit's
# progress), never in seconds, so that their verdict does not depend on
# the speed or the load of the machine.
#
# interrupted_at_step() runs, in a child R process (run_child_r(),
# helper-child.R), the code `setup`, then `work`, in which the package's
# code calls step() after each unit of its work. At the at-th call, step()
# sends SIGINT to its own process: from there on an interrupt is pending,
# and R acts on it at the code's next check for interrupts
# (R_CheckUserInterrupt()). R's evaluator checks too, every thousand
# evaluations, so step() leaves it few: it is compiled beforehand (R's JIT
# would compile it at its second call, running the compiler's R code), and
# runs with interrupts suspended, the end of the suspension its last act. A time limit would not do: R tests its time
# limits at most at every sixth check and every 0.05 s, so the work done
# after one depends on the speed of the machine. Then `after` runs (R
# after the interrupt), its value returned. Returns the status
# ("interrupted", "finished", or an error's message), the calls of step()
# in all and those after the at-th (the units of work finished before the
# code acted on the interrupt), the value of `after`, and the child's
# output. setup, work and after are quoted expressions; the child's
# timeout is only a guard against a hang. env: the child's environment
# variables ("NAME=value"); forked: the work, the interrupt and `after` run
# in a child that the child R process forks (parallel::mcparallel()), after
# `setup` (where the parent may run threads first).
interrupted_at_step <- function(work, at, setup = NULL, after = NULL, timeout = 600,
                                env = character(), forked = FALSE) {
  out <- tempfile(fileext = ".rds")
  on.exit(unlink(out))
  code_of <- function(e) if (is.null(e)) "NULL" else deparse(e, width.cutoff = 500L)
  code <- c(
    "suppressPackageStartupMessages(library(fastkpca))",
    "options(fastkpca.progress = FALSE)",
    sprintf("at <- %d", as.integer(at)),
    "steps <- 0L",
    "step <- compiler::cmpfun(function(...) suspendInterrupts({",
    "  steps <<- steps + 1L",
    "  if (steps == at) tools::pskill(Sys.getpid(), tools::SIGINT)",
    "}))",
    code_of(setup),
    "interrupted_work <- function() {",
    "status <- tryCatch({",
    code_of(work),
    "  'finished'",
    "}, interrupt = function(e) 'interrupted', error = function(e) conditionMessage(e))",
    "n_steps <- steps",
    "value <- {", code_of(after), "}",
    "list(status = status, steps = n_steps, value = value)",
    "}",
    if (forked) "result <- parallel::mccollect(parallel::mcparallel(interrupted_work()))[[1]]"
    else "result <- interrupted_work()",
    sprintf("saveRDS(result, %s)", deparse(out)))
  lines <- run_child_r(code, env = env, timeout = timeout)
  res <- if (file.exists(out)) readRDS(out) else list(status = "no report", steps = NA_integer_)
  res$after <- max(0L, res$steps - as.integer(at))
  res$lines <- lines
  res
}

# The child's output, for the info of an expectation.
child_output <- function(res) paste(utils::tail(res$lines, 15), collapse = "\n")

# The C entry points that expr entered (src/simd.c records each entry;
# fastkpca:::engine_entry_paths() reads and clears the record): for the
# tests that a refused fit did no work before it was refused.
entries_entered <- function(expr) {
  invisible(fastkpca:::engine_entry_paths())
  force(expr)
  names(fastkpca:::engine_entry_paths())
}
