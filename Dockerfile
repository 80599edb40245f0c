# permitcheck in a Debian 12 container: `docker build -t permitcheck .`, then
#   docker run --rm -v "$PWD:/w" -w /w permitcheck validate trace.jsonl
#   docker run --rm --network host -v "$PWD:/w" -w /w permitcheck conform --client '...'
# The first stage builds the Debian package exactly as the repository does (cmake, cpack); the
# second installs it with apt, which pulls the runtime libraries its Depends line names.
# A client run by `conform` runs inside the container: install its runtime there (action.yml's
# `setup` input does that for the GitHub Action).
FROM debian:12 AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      build-essential cmake ninja-build pkg-config file dpkg-dev \
      libgtest-dev libgmock-dev googletest librapidcheck-dev libz3-dev libabsl-dev \
      libsimdjson-dev libprotobuf-dev protobuf-compiler libasio-dev libcli11-dev libpcap-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DPERMITCHECK_BENCH=OFF \
 && cmake --build build --target permitcheck permitcheck-reference-client \
 && cd build && cpack -G DEB

FROM debian:12-slim
COPY --from=build /src/build/permitcheck_*.deb /tmp/
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends /tmp/permitcheck_*.deb \
 && rm -rf /var/lib/apt/lists/* /tmp/permitcheck_*.deb
ENTRYPOINT ["permitcheck"]
CMD ["--help"]
