# Install rules and the Debian package (docs/maintainers.md, "Packaging").
#
#   cmake --install build --prefix /tmp/pc     # bin/permitcheck, share/doc/permitcheck, ...
#   (cd build && cpack -G DEB)                  # permitcheck_VERSION_ARCH.deb, for Debian 12
#
# What is installed: the `permitcheck` command and the reference client (a rev-d consumer, the
# positive control for `permitcheck conform`); the user docs and the example traces; the shipped
# consumers' sources as templates for a client developer's own consumer (not their installed
# libraries, virtual environments or builds: those come from npm, PyPI, the Go proxy and Maven).
# The package's Depends line is computed from the binaries by dpkg-shlibdeps (Debian 12
# library packages), so it installs with apt on Debian 12 and nowhere else.
include(GNUInstallDirs)

if(TARGET permitcheck)
  install(TARGETS permitcheck RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
if(TARGET permitcheck-reference-client)
  install(TARGETS permitcheck-reference-client RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

set(PERMITCHECK_DOC_DIR ${CMAKE_INSTALL_DATAROOTDIR}/doc/permitcheck)
install(FILES README.md DESTINATION ${PERMITCHECK_DOC_DIR})
install(FILES docs/check-your-client.md docs/instrumenting.md docs/trace-format.md docs/rules.md
              docs/cli.md docs/bug-catalogue.md
        DESTINATION ${PERMITCHECK_DOC_DIR}/docs)
install(DIRECTORY docs/examples docs/findings DESTINATION ${PERMITCHECK_DOC_DIR}/docs)
# The consumers' sources only, by name: a checkout may hold node_modules/, .venv*/, target*/
# and Go binaries next to them (ci/install-deps.sh), which must not reach the package.
install(DIRECTORY clients/ DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/permitcheck/clients
        FILES_MATCHING
        PATTERN "consumer.js" PATTERN "package.json" PATTERN "package-lock.json"
        PATTERN "consumer.py" PATTERN "requirements*.txt"
        PATTERN "*.go" PATTERN "go.mod" PATTERN "go.sum"
        PATTERN "*.java" PATTERN "pom.xml" PATTERN "catalogue-versions"
        PATTERN "node_modules" EXCLUDE PATTERN ".venv*" EXCLUDE PATTERN "target*" EXCLUDE)
# The reference client's source beside the shipped consumers, as before it moved into conformance/.
install(FILES conformance/reference_client.cc
        DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/permitcheck/clients/reference)

set(CPACK_PACKAGE_NAME permitcheck)
set(CPACK_PACKAGE_VENDOR "permitcheck")
set(CPACK_PACKAGE_CONTACT "permitcheck maintainers <permitcheck@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "verification suite for Apache Pulsar's PIP-491 consumer permit rules")
set(CPACK_PACKAGE_DESCRIPTION
    "permitcheck checks that a Pulsar client returns exactly the permits the broker debited: \
it runs a client under a PIP-491 conformance broker (conform), checks live traffic through a \
tap or from a packet capture, and validates permit traces a client logs itself.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
include(CPack)
