# Sourced by ci/main: whether each official client's runtime is installed, and the section of
# the bug catalogue. The clients themselves run in the interop matrix (ci/main, section 6:
# `permitcheck matrix`), each judged against its pinned expectations in
# conformance/expectations/NAME.txt (one line per scenario that does not simply pass, with the
# race behind each "any").
#
#   official_client_missing NAME   # empty when NAME can run, else why not
#   expect_catalogue               # permitcheck conform --catalogue: every row both ways

# Empty when NAME's runtime and consumer are installed; else why not.
official_client_missing() {
  case $1 in
    java)
      command -v java >/dev/null 2>&1 || { echo "no java runtime on the PATH"; return; }
      [ -f clients/java/target/consumer.jar ] ||
        echo "clients/java/target/consumer.jar is not built (ci/install-java-client.sh)"
      ;;
    cpp)
      [ -x clients/cpp/.venv/bin/python ] ||
        echo "clients/cpp/.venv is not installed (ci/install-python-client.sh)"
      ;;
    rust)
      [ -x clients/rust/permitcheck-rust-consumer ] ||
        echo "clients/rust/permitcheck-rust-consumer is not built (ci/install-rust-client.sh)"
      ;;
    go)
      [ -x clients/go/permitcheck-go-consumer ] ||
        echo "clients/go/permitcheck-go-consumer is not built (ci/install-go-client.sh)"
      ;;
  esac
}

expect_catalogue() {
  build/cli/permitcheck conform --catalogue 2>/dev/null
}
