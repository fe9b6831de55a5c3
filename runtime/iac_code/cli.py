import sys
def main() -> int:
    print("iac-code")
    return 2
