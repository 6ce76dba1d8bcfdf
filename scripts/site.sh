#!/usr/bin/env bash
# Builds fastkpca's pkgdown site (_pkgdown.yml) into a folder outside the
# repository, with no network use beyond the package registries:
#   bash scripts/site.sh [OUTPUT_DIR]     (default: a new temporary folder)
# The last line printed is the site's folder; open index.html in it.
# - FASTKPCA_SITE_LIB: a library where this fastkpca is installed already
#   (scripts/test.sh passes its own); otherwise the package is installed
#   from a copy of the sources into a temporary library.
# - FASTKPCA_SITE_EXAMPLES=false: do not run the help pages' examples
#   (scripts/test.sh: R CMD check runs them anyway).
# Nothing is written into the checkout: pkgdown reads a copy of it.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-$(mktemp -d)/fastkpca-site}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
case "$out/" in
  "$here"/*) echo "site: $out is inside the repository; give a folder outside it" >&2
             exit 1 ;;
esac

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir "$work/src"
tar -C "$here" --exclude=.git --exclude='*.o' --exclude='*.so' \
  --exclude='*.Rcheck' --exclude='fastkpca_*.tar.gz' -cf - . |
  tar -C "$work/src" -xf -

# The README links to the articles' sources (vignettes/*.Rmd,
# vignettes/articles/*.Rmd) and to NEWS.md, which is what works on a code
# host; on the site those are articles/*.html and news/index.html.
sed -E -i -e 's#\]\(vignettes/(articles/)?([A-Za-z0-9_.-]+)\.Rmd\)#](articles/\2.html)#g' \
  -e 's#\]\(NEWS\.md\)#](news/index.html)#g' "$work/src/README.md"

lib="${FASTKPCA_SITE_LIB:-}"
if [ -z "$lib" ]; then
  lib="$work/lib"
  mkdir "$lib"
  echo "site: installing fastkpca into a temporary library"
  if ! R CMD INSTALL --no-test-load --library="$lib" "$work/src" >"$work/install.log" 2>&1; then
    cat "$work/install.log" >&2
    exit 1
  fi
fi
export R_LIBS="$lib${R_LIBS:+:$R_LIBS}"
export FASTKPCA_SITE_SRC="$work/src" FASTKPCA_SITE_OUT="$out"
export FASTKPCA_SITE_EXAMPLES="${FASTKPCA_SITE_EXAMPLES:-true}"
# without TZ, R asks timedatectl for the time zone (see scripts/test.sh)
export TZ="${TZ:-UTC}"

Rscript - <<'EOF'
src <- Sys.getenv("FASTKPCA_SITE_SRC")
out <- Sys.getenv("FASTKPCA_SITE_OUT")
# Offline. pkgdown 2.0.7 asks CRAN and Bioconductor for the sidebar's
# "View on CRAN" link and crandb for the news' release dates unless
# pkgdown.internet is FALSE (_pkgdown.yml leaves the "links" part out of
# the sidebar as well).
options(pkgdown.internet = FALSE)
# downlit 0.4.2 (pkgdown's linker) would look two things up on the web:
# the pkgdown site of an installed package whose topics the pages use
# (remote_metadata(): it downloads pkgdown.yml from the URLs of the
# package's DESCRIPTION), and the web address of a package that is not
# installed (CRAN_urls(): CRAN's whole package database). Without them a
# topic of another installed package links to rdrr.io's fixed address for
# it, and a package that is not installed gets no link.
utils::assignInNamespace("remote_metadata", function(package) NULL, "downlit")
utils::assignInNamespace("CRAN_urls", function() {
  data.frame(Package = character(), URL = character())
}, "downlit")

pkgdown::check_pkgdown(src)
pkgdown::build_site(src, override = list(destination = out),
                    examples = Sys.getenv("FASTKPCA_SITE_EXAMPLES") != "false",
                    new_process = FALSE, install = FALSE, devel = FALSE,
                    preview = FALSE)
EOF
echo "$out"
