#!/usr/bin/env bash
# Validate and build the SAM template offline, the way a deployment would see it:
#   1. sam validate --lint          (SAM transform of template.yaml + cfn-lint)
#   2. cfn-lint + serverless rules  (cfn-lint-serverless; .cfnlintrc says what is ignored and why)
#   3. sam build                    (no container: pip-installs the layer requirements with the
#                                    template's runtime, python3.12, from PATH or pyenv)
# after checking that the layers' lock files (requirements.txt) are current with pyproject.toml
# (scripts/layer_requirements.py --check), then prints the built size of each layer and of each function
# with its layers and fails when one is over Lambda's 250 MiB unzipped limit
# (scripts/built_sizes.py). Every step is timed.
#
# SAM CLI lives in its own venv (.venv-sam, created on first use): it pins its own cfn-lint and
# aws-sam-translator, which must not leak into the project's .venv.
#
# Usage: scripts/validate-template.sh [--no-build]
#   TEMPLATE (template.yaml), BUILD_DIR (.aws-sam/build), SAM_VENV (.venv-sam), PYTHON may be set.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)
TEMPLATE=${TEMPLATE:-template.yaml}
BUILD_DIR=${BUILD_DIR:-.aws-sam/build}
SAM_VENV=${SAM_VENV:-$ROOT/.venv-sam}
PYTHON=${PYTHON:-$(command -v python3.11 || command -v python3)}
SAM_CLI_VERSION=1.170.0
CFN_LINT_SERVERLESS_VERSION=0.3.6

BUILD=1
for arg in "$@"; do
  case "$arg" in
    --no-build) BUILD=0 ;;
    -h | --help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "unknown argument: $arg" >&2; exit 2 ;;
  esac
done

# No AWS account here: a region is enough for validate/build; never ask for credentials.
export AWS_DEFAULT_REGION=${AWS_DEFAULT_REGION:-us-east-1}
export SAM_CLI_TELEMETRY=0
# The template uses the AWS::LanguageExtensions transform (Fn::If on the HTTP API's Auth);
# have SAM CLI expand it locally as CloudFormation does.
export SAM_CLI_ENABLE_LANGUAGE_EXTENSIONS=1

TIMINGS=()
step() {
  local name=$1
  shift
  echo "==> $name: $*"
  local start end
  start=$(date +%s.%N)
  "$@"
  end=$(date +%s.%N)
  TIMINGS+=("$(awk -v n="$name" -v a="$start" -v b="$end" 'BEGIN { printf "%-34s %7.1f s", n, b - a }')")
}

install_sam() {
  if [ -x "$SAM_VENV/bin/sam" ] && [ -x "$SAM_VENV/bin/cfn-lint" ] \
    && "$SAM_VENV/bin/python" -c "import cfn_lint_serverless" 2>/dev/null; then
    echo "$SAM_VENV already has SAM CLI ($("$SAM_VENV/bin/sam" --version))"
    return
  fi
  "$PYTHON" -m venv "$SAM_VENV"
  "$SAM_VENV/bin/python" -m pip install --quiet --upgrade pip
  "$SAM_VENV/bin/python" -m pip install --quiet \
    "aws-sam-cli==$SAM_CLI_VERSION" "cfn-lint-serverless==$CFN_LINT_SERVERLESS_VERSION"
}

# The functions' runtime (Globals Function Runtime in the template): `sam build` (no container)
# runs the layer's pip install with that very interpreter, found by name on PATH.
RUNTIME=$(sed -n 's/^    Runtime: \(python3\.[0-9]*\)$/\1/p' "$TEMPLATE" | head -n 1)
RUNTIME=${RUNTIME:-python3.12}

# Put a working $RUNTIME first on PATH: the one on PATH if it runs, else the newest pyenv version
# of it (scripts/find_python.sh; a pyenv shim is on PATH even when no version is selected).
find_runtime_python() {
  local bin
  if bin=$(bash scripts/find_python.sh "${RUNTIME#python}"); then
    export PATH="$(dirname "$bin"):$PATH"
    echo "$RUNTIME for sam build: $bin ($("$bin" --version 2>&1))"
    return
  fi
  echo "sam build needs $RUNTIME (the template's Runtime) and none was found: not on PATH and" \
    "not among pyenv's versions. Install it (e.g. \`pyenv install ${RUNTIME#python}\`) or put it" \
    "on PATH, or run with --no-build." >&2
  return 1
}

step "install SAM CLI (.venv-sam)" install_sam
step "sam validate --lint" "$SAM_VENV/bin/sam" validate --lint --template "$TEMPLATE"
step "sam validate (SAM transform)" "$SAM_VENV/bin/sam" validate --template "$TEMPLATE"
step "cfn-lint (+ serverless rules)" \
  "$SAM_VENV/bin/cfn-lint" --append-rules cfn_lint_serverless.rules -- "$TEMPLATE"
step "layer lock files = pyproject" "$SAM_VENV/bin/python" scripts/layer_requirements.py --check
if [ "$BUILD" = 1 ]; then
  find_runtime_python
  step "sam build" "$SAM_VENV/bin/sam" build --template "$TEMPLATE" --build-dir "$BUILD_DIR"
  step "built sizes (each <= 250 MiB)" \
    "$SAM_VENV/bin/python" scripts/built_sizes.py --template "$TEMPLATE" --build-dir "$BUILD_DIR"
fi

echo
echo "timings:"
printf '  %s\n' "${TIMINGS[@]}"
