import sys
def main() -> int:
    print("acp-conformance")
    return 2
