/// How `/photos` and its answer are described in the API document.
enum FlickrAPI {
    static let photos = OpenAPIValue.feedOperation(
        "Flickr public photos", answers: "PhotoFeed",
        [
            .query(
                "tags", "comma-separated tags (at most 20, each at most 100 printable characters)",
                ["type": "string", "pattern": "^[^\\u0000-\\u001f\\u007f-\\u009f]*$"]),
            .query("tagmode", "all tags or any", ["type": "string", "enum": ["all", "any"]]),
            .query("id", "a Flickr user id", ["type": "string", "pattern": "^\\s*[0-9]+@N[0-9]{2}\\s*$"]),
            .query(
                "ids", "comma-separated Flickr user ids (at most 20)",
                ["type": "string", "pattern": "^\\s*[0-9]+@N[0-9]{2}\\s*(,\\s*[0-9]+@N[0-9]{2}\\s*)*$"]),
            .query("lang", "language", ["type": "string", "enum": ["de-de", "en-us", "es-us", "fr-fr", "it-it", "ko-kr", "pt-br", "zh-hk"]]),
            .query("limit", "items, 1-20", ["type": "integer", "minimum": 1, "maximum": 20, "default": 20]),
        ])

    static let schemas: OpenAPIValue = [
        "PhotoImages": .imageSizes(
            [
                ("s", 75, 75, 75, "75x75 square"), ("q", 150, 150, 150, "150x150 square"), ("t", nil, nil, 100, "longest edge 100"),
                ("m", nil, nil, 240, "longest edge 240"), ("n", nil, nil, 320, "longest edge 320"), ("z", nil, nil, 640, "longest edge 640"),
                ("b", nil, nil, 1024, "longest edge 1024"),
            ], description: "Flickr's size suffixes"),
        "Photo": .closedObject([
            "id": .nullable("string"), "title": .nullable("string"), "link": .nullable("string"), "imageUrl": .nullable("string"),
            "largeImageUrl": .nullable("string"), "images": .orNull(.ref("PhotoImages")), "author": .nullable("string"),
            "authorId": .nullable("string"), "tags": .stringArray, "published": .timestamp, "taken": .timestamp, "description": .nullable("string"),
        ]),
        "PhotoFeed": .envelope(items: .ref("Photo"), source: "flickr", page: nil),
    ]
}
