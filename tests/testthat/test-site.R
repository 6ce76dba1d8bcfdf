# The pkgdown site (scripts/site.sh, _pkgdown.yml) opened in a real browser,
# headless Chromium: the home page and an article have their title, a
# figure the browser decoded, text laid out on the page, and no internal
# link to a file that is missing or to an anchor that is not there; the
# reference index lists every documented topic in exactly one group.
# The site: FASTKPCA_SITE_DIR (scripts/test.sh builds it before R CMD
# check), or, in a source checkout, built here by scripts/site.sh.

site_script <- function() {
  for (p in c("../../scripts/site.sh", "../../../scripts/site.sh"))
    if (file.exists(p)) return(normalizePath(p))
  ""
}

# built once per test run (a failed build is not tried again)
site_dir <- local({
  built <- NULL
  failed <- NULL
  function() {
    dir <- Sys.getenv("FASTKPCA_SITE_DIR")
    if (nzchar(dir)) return(dir)
    if (!is.null(built)) return(built)
    if (!is.null(failed)) stop(failed)
    script <- site_script()
    skip_if(!nzchar(script), "no FASTKPCA_SITE_DIR and no scripts/site.sh")
    skip_if_not_installed("pkgdown")
    out <- file.path(tempfile("site"), "fastkpca-site")
    # this session's fastkpca, and no examples (R CMD check runs them)
    lib <- dirname(system.file(package = "fastkpca"))
    log <- system2("bash", c(shQuote(script), shQuote(out)), stdout = TRUE,
                   stderr = TRUE, env = c(paste0("FASTKPCA_SITE_LIB=", lib),
                                          "FASTKPCA_SITE_EXAMPLES=false"))
    if (!is.null(attr(log, "status"))) {
      failed <<- paste0("scripts/site.sh failed:\n",
                        paste(utils::tail(log, 30), collapse = "\n"))
      stop(failed)
    }
    built <<- out
    out
  }
})

chromium <- function() {
  for (b in c("chromium", "chromium-browser", "google-chrome"))
    if (nzchar(Sys.which(b))) return(unname(Sys.which(b)))
  ""
}

# Chromium loads `page` (a file of the site) in a frame of a checker page,
# which reads the frame's document once it has loaded, images included, and
# writes a report into its own DOM, dumped by --dump-dom. Every internal
# link is requested (file access between local files allowed); the web is
# cut off, so the CDN scripts of pkgdown's template fail fast.
browse <- function(page) {
  dir <- tempfile("chromium")
  dir.create(file.path(dir, "profile"), recursive = TRUE)
  on.exit(unlink(dir, recursive = TRUE))
  url <- paste0("file://", normalizePath(page))
  checker <- file.path(dir, "check.html")
  writeLines(sprintf(checker_html, url), checker)
  # (without the sanitizers' preloaded libasan, under which Chromium spins:
  # scripts/sanitizers.sh preloads it into R, whose children inherit it)
  old <- Sys.getenv("LD_PRELOAD", NA)
  Sys.unsetenv("LD_PRELOAD")
  on.exit(if (!is.na(old)) Sys.setenv(LD_PRELOAD = old), add = TRUE)
  out <- system2(chromium(), c(
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
    "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync",
    paste0("--user-data-dir=", file.path(dir, "profile")),
    "--allow-file-access-from-files",
    shQuote("--host-resolver-rules=MAP * ~NOTFOUND"),
    "--window-size=1280,1024", "--virtual-time-budget=5000",
    "--dump-dom", paste0("file://", checker)), stdout = TRUE, stderr = FALSE)
  # each value is URI-encoded: no spaces, no markup
  report <- unlist(regmatches(out, gregexpr("REPORT [a-z0-9_]+ [^ <]*", out)))
  keys <- sub("^REPORT ([a-z0-9_]+) .*$", "\\1", report)
  values <- vapply(sub("^REPORT [a-z0-9_]+ ", "", report), utils::URLdecode, "")
  split(unname(values), keys)
}

checker_html <- '<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>checker</title></head><body>
<pre id="report">no report</pre>
<iframe id="page" style="width:1200px;height:1000px" src="%s"></iframe>
<script>
var frame = document.getElementById("page");
frame.addEventListener("load", function () {
  var doc = frame.contentDocument, lines = [];
  function put(key, value) {
    lines.push("REPORT " + key + " " + encodeURIComponent(String(value)));
  }
  put("title", doc.title);
  doc.querySelectorAll("h1").forEach(function (h) { put("h1", h.textContent.trim()); });
  put("text_chars", doc.body.innerText.trim().length);
  var main = doc.querySelector("main");
  put("main_height", main ? main.getBoundingClientRect().height : 0);
  Array.from(doc.images).forEach(function (img) {
    // the article template of pkgdown has an empty logo when there is none
    if (!img.getAttribute("src") || img.src.indexOf("file:") !== 0) return;
    put("image", img.naturalWidth + "x" + img.naturalHeight + " " + img.getAttribute("src"));
  });
  var here = frame.contentWindow.location.href.split("#")[0], seen = {};
  Array.from(doc.querySelectorAll("a[href]")).forEach(function (a) {
    if (a.href.indexOf("file:") !== 0 || seen[a.href]) return;
    seen[a.href] = true;
    var parts = a.href.split("#"), ok = true;
    if (parts[0] === here) {
      ok = parts.length < 2 || parts[1] === "" ||
        doc.getElementById(decodeURIComponent(parts[1])) !== null;
    } else {
      try {
        var req = new XMLHttpRequest();
        req.open("GET", parts[0], false);
        req.send();
        ok = req.responseText.length > 0;
      } catch (e) { ok = false; }
    }
    put(ok ? "link_ok" : "link_broken", a.getAttribute("href"));
  });
  document.getElementById("report").textContent = lines.join("\\n");
});
</script></body></html>'

expect_rendered <- function(report, title_pattern, min_images = 1L) {
  expect_match(report$title, title_pattern)
  expect_gte(length(report$h1), 1L)
  # laid out: text on the page and a main column of some height
  expect_gt(as.numeric(report$text_chars), 1000)
  expect_gt(as.numeric(report$main_height), 500)
  # figures the browser decoded (a missing or broken file has width 0)
  size <- sub(" .*", "", report$image)
  width <- as.numeric(sub("x.*", "", size))
  expect_gte(sum(width >= 200), min_images)
  expect_identical(report$link_broken, NULL)
  expect_gte(length(report$link_ok), 10L)
}

test_that("the home page renders with its title and the README's figure", {
  skip_on_cran()
  skip_if(!nzchar(chromium()), "no chromium (scripts/install-deps.sh installs it)")
  site <- site_dir()
  expect_true(file.exists(file.path(site, "index.html")))
  report <- browse(file.path(site, "index.html"))
  expect_rendered(report, "fastkpca")
  expect_true(any(grepl("README-rings\\.png$", report$image)))
  # the links to the articles, which the README names
  for (a in c("fastkpca", "benchmarks"))
    expect_true(any(grepl(paste0("articles/", a, "\\.html"), report$link_ok)),
                label = a)
})

test_that("an article renders with its title and its figures", {
  skip_on_cran()
  skip_if(!nzchar(chromium()), "no chromium (scripts/install-deps.sh installs it)")
  report <- browse(file.path(site_dir(), "articles", "fastkpca.html"))
  expect_rendered(report, "From PCA to kernel PCA", min_images = 3L)
})

test_that("the checker sees a broken link and a missing figure", {
  skip_on_cran()
  skip_if(!nzchar(chromium()), "no chromium (scripts/install-deps.sh installs it)")
  dir <- tempfile("broken")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE))
  page <- file.path(dir, "page.html")
  writeLines(c("<html><head><title>broken</title></head><body><main>",
               "<h1>A page</h1><img src='missing.png'>",
               paste0("<div style='display:none'>", strrep("hidden ", 200), "</div>"),
               "<a href='page.html'>itself</a> <a href='gone.html'>gone</a>",
               "<a href='#nowhere'>no anchor</a></main></body></html>"), page)
  report <- browse(page)
  expect_identical(report$title, "broken")
  # text counts as rendered only if it is laid out: none of the hidden words
  expect_lt(as.numeric(report$text_chars), 100)
  expect_identical(report$image, "0x0 missing.png")
  expect_setequal(report$link_broken, c("gone.html", "#nowhere"))
  expect_identical(report$link_ok, "page.html")
})

test_that("the reference index lists every topic in exactly one group", {
  skip_on_cran()
  index <- file.path(site_dir(), "reference", "index.html")
  expect_true(file.exists(index))
  html <- paste(readLines(index, encoding = "UTF-8"), collapse = "\n")
  sections <- strsplit(html, "<h2 id=", fixed = TRUE)[[1]][-1]
  expect_gte(length(sections), 7L)
  pages <- lapply(sections, function(s) {
    links <- regmatches(s, gregexpr('<dt>.*?</dt>', s))[[1]]
    unique(sub('.*href="([^"]+)\\.html".*', "\\1",
               unlist(regmatches(links, gregexpr('href="[^"]+\\.html"', links)))))
  })
  listed <- unlist(pages)
  # the installed help pages that are not internal
  rd <- tools::Rd_db("fastkpca")
  internal <- vapply(rd, function(r) {
    "internal" %in% unlist(lapply(r[vapply(r, attr, "", "Rd_tag") == "\\keyword"],
                                  as.character))
  }, logical(1))
  topics <- sub("\\.Rd$", "", names(rd))[!internal]
  expect_setequal(listed, topics)
  expect_identical(anyDuplicated(listed), 0L)
})
