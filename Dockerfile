# syntax=docker/dockerfile:1
#
# locator as a container: a static binary (CGO_ENABLED=0: the SQLite driver
# is pure Go) on an empty base with CA certificates and the time-zone
# database, run as a non-root user, its database on a volume.
#
#   docker build -t locator .
#   docker run --rm -p 127.0.0.1:8700:8700 locator sim --addr 0.0.0.0:8700
#   docker run -d --name locator --env-file locator.env \
#     -v locator-state:/var/lib/locator -v "$PWD/locator.json:/etc/locator/locator.json:ro" locator
#
# See docs/operations.md, "Running as a service".

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# The build's time goes into the binary (`locator version`): Go records the
# commit's time, never the build's.
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w -X main.buildTime=$(date -u +%Y-%m-%dT%H:%M:%SZ)" -o /out/locator ./cmd/locator
# The user the image runs as, and its state directory (owned by it, so the
# volume Docker creates from it is writable).
RUN echo 'locator:x:65532:65532:locator:/var/lib/locator:/sbin/nologin' > /out/passwd && \
    echo 'locator:x:65532:' > /out/group && \
    mkdir -p /out/state && chmod 0700 /out/state

FROM scratch
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /usr/local/go/lib/time/zoneinfo.zip /usr/share/zoneinfo.zip
COPY --from=build /out/passwd /etc/passwd
COPY --from=build /out/group /etc/group
COPY --from=build --chown=65532:65532 /out/state /var/lib/locator
COPY --from=build /out/locator /usr/local/bin/locator
ENV ZONEINFO=/usr/share/zoneinfo.zip \
    HOME=/var/lib/locator \
    LOCATOR_DB=/var/lib/locator/locator.db
USER 65532:65532
VOLUME ["/var/lib/locator"]
ENTRYPOINT ["/usr/local/bin/locator"]
CMD ["run", "--config", "/etc/locator/locator.json"]
