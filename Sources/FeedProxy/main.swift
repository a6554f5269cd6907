print("feedproxy")
