# syntax=docker/dockerfile:1
# Build: docker build --build-arg VERSION=$(git describe --always) -t streamwatch .
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
# The release build, as on a developer's machine (the Makefile's build target).
RUN make build VERSION=${VERSION} BIN=/out/streamwatch

# distroless/static carries CA certificates and a non-root user (65532), nothing else.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/streamwatch /streamwatch
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/streamwatch"]
CMD ["serve", "--config", "/etc/streamwatch/config.yaml"]
